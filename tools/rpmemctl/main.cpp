// SPDX-License-Identifier: BSD-3-Clause
// rpmemctl: the administration tool. CLI11 dispatches to the subcommands, each in its own file.
#include <iostream>

#include "command.h"

int main(int argc, char** argv) {
    using namespace rpmem::tools;
    CLI::App app("rpmemctl: administration of rpmem (rpmemd, its pools, pool set files)",
                 "rpmemctl");
    configure_program(app, "rpmemctl COMMAND --help shows the arguments of a command.");
    CommandOutput output{std::cout, std::cerr};
    add_init_command(app, output);
    add_status_command(app, output);
    add_events_command(app, output);
    add_create_command(app, output);
    add_info_command(app, output);
    add_remove_command(app, output);
    add_poolset_command(app, output);
    add_verify_command(app, output);
    add_restore_command(app, output);
    add_failover_commands(app, output);
    return run_command_line(app, argc, argv, output);
}
