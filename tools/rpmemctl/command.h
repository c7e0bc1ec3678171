// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <ostream>
#include <string_view>

#include "base/error.h"
#include "command_line.h"

namespace rpmem::tools {

// Each rpmemctl subcommand, in its own file, adds itself to the program's CLI11 App: its
// arguments, its help, and the run that the parsed command line leads to.

void add_init_command(CLI::App& app, CommandOutput& output);    // init_command.cpp
void add_status_command(CLI::App& app, CommandOutput& output);  // status_command.cpp
void add_events_command(CLI::App& app, CommandOutput& output);  // events_command.cpp
void add_create_command(CLI::App& app, CommandOutput& output);  // create_command.cpp
void add_info_command(CLI::App& app, CommandOutput& output);    // info_command.cpp
void add_remove_command(CLI::App& app, CommandOutput& output);  // remove_command.cpp
void add_poolset_command(CLI::App& app, CommandOutput& output); // poolset_command.cpp
void add_verify_command(CLI::App& app, CommandOutput& output);  // verify_command.cpp
void add_restore_command(CLI::App& app, CommandOutput& output); // restore_command.cpp
// role, promote, demote, rejoin (failover_commands.cpp).
void add_failover_commands(CLI::App& app, CommandOutput& output);

// Reports a failed step as "rpmemctl COMMAND: what failed" on `err`; returns kExitFailure.
inline int report_failure(std::ostream& err, std::string_view command, const Error& error) {
    err << "rpmemctl " << command << ": " << error.message() << "\n";
    return kExitFailure;
}

// The footer of every subcommand talking to rpmemd: how it authenticates, its exit statuses.
inline constexpr const char* kRemoteFooter =
    "TARGET is rpmemd's [user@]HOST[:PORT]. rpmemctl connects over mutual TLS with the client\n"
    "credentials of RPMEM_TLS_CA, RPMEM_TLS_CERT and RPMEM_TLS_KEY or the client config file.\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.";

} // namespace rpmem::tools
