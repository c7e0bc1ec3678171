// SPDX-License-Identifier: BSD-3-Clause
// rpmemctl: the administration tool. A dispatcher over subcommands, each in its own file.
#include <array>
#include <iostream>
#include <string_view>
#include <vector>

#include "command.h"

namespace {

using rpmem::tools::Command;

constexpr std::array kCommands{
    Command{"init", "make a CA, server and client certificates (init DIR)",
            &rpmem::tools::run_init_command},
    Command{"status", "ask a running rpmemd how it is doing (status TARGET [--json])",
            &rpmem::tools::run_status_command},
    Command{"events", "follow rpmemd's events as JSON lines (events TARGET [--history] [--once])",
            &rpmem::tools::run_events_command},
    Command{"create", "create a pool on rpmemd (create TARGET SET [--signature SIG])",
            &rpmem::tools::run_create_command},
    Command{"info", "size and attributes of a pool on rpmemd (info TARGET SET)",
            &rpmem::tools::run_info_command},
    Command{"remove", "remove a pool on rpmemd (remove TARGET SET [--force] [--pool-set])",
            &rpmem::tools::run_remove_command},
    Command{"poolset", "check pool set files (poolset check FILE [--json] [--target])",
            &rpmem::tools::run_poolset_command},
    Command{"verify",
            "compare a pool with its remote replicas by digests, optionally repair them "
            "(verify SET [--repair] [--extent-size N] [--json])",
            &rpmem::tools::run_verify_command},
    Command{"role", "a pool set's role, state and generation on rpmemd (role TARGET SET [--json])",
            &rpmem::tools::run_role_command},
    Command{"promote",
            "make a replica a primary, fencing its old primary (promote TARGET SET "
            "[--force])",
            &rpmem::tools::run_promote_command},
    Command{"demote", "undo a promote nothing used (demote TARGET SET [--generation N])",
            &rpmem::tools::run_demote_command},
    Command{"rejoin",
            "make the old primary a replica of the new one (rejoin NEW_PRIMARY SET OLD_PRIMARY "
            "OLD_SET)",
            &rpmem::tools::run_rejoin_command},
};

void print_usage(std::ostream& out) {
    out << "usage: rpmemctl COMMAND [ARGS...]\n\ncommands:\n";
    for (const Command& command : kCommands)
        out << "  " << command.name << "\t" << command.summary << "\n";
    out << "\nrpmemctl COMMAND --help shows the arguments of a command.\n";
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_usage(std::cerr);
        return rpmem::tools::kExitUsage;
    }
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_usage(std::cout);
        return rpmem::tools::kExitOk;
    }
    for (const Command& command : kCommands) {
        if (args[0] == command.name)
            return command.run(std::span(args).subspan(1), std::cout, std::cerr);
    }
    std::cerr << "rpmemctl: unknown command '" << args[0] << "'\n\n";
    print_usage(std::cerr);
    return rpmem::tools::kExitUsage;
}
