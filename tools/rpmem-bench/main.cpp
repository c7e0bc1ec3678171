// SPDX-License-Identifier: BSD-3-Clause
// rpmem-bench: performance measurements. A dispatcher over subcommands, each in its own file:
// `raw` (the fabric limit), `persist` (rpmem's data path), `pmemobj` (whole transactions) and
// `resync` (a degraded replica catching up).
#include <array>
#include <iostream>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "command.h"

namespace {

using rpmem::bench::Command;

constexpr std::array kCommands{
    Command{"raw", "fabric round trips on loopback: write+read, write+send+reply, commit, batch",
            &rpmem::bench::run_raw_command},
    Command{"persist", "rpmem's replicated persists against the raw round trip, same run",
            &rpmem::bench::run_persist_command},
    Command{"sessions", "one session's persist latency among many loaded ones, against it alone",
            &rpmem::bench::run_sessions_command},
    Command{"resync", "a degraded replica's online resync against the raw write bandwidth",
            &rpmem::bench::run_resync_command},
#ifdef RPMEM_BENCH_PMEMOBJ
    Command{"pmemobj", "libpmemobj transactions on a replicated pool against the fabric's floor",
            &rpmem::bench::run_pmemobj_command},
#endif
};

void print_usage(std::ostream& out) {
    out << "usage: rpmem-bench COMMAND [ARGS...]\n\ncommands:\n";
    for (const Command& command : kCommands)
        out << "  " << command.name << "\t" << command.summary << "\n";
    out << "\nrpmem-bench COMMAND --help shows the arguments of a command.\n";
}

} // namespace

int main(int argc, char** argv) {
    // The in-process target (rpmemd's FabricTarget) logs its sessions at info; here only its
    // warnings belong beside the results.
    spdlog::set_level(spdlog::level::warn);
    std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_usage(std::cerr);
        return rpmem::bench::kExitUsage;
    }
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_usage(std::cout);
        return rpmem::bench::kExitOk;
    }
    for (const Command& command : kCommands) {
        if (args[0] == command.name)
            return command.run(std::span(args).subspan(1), std::cout, std::cerr);
    }
    std::cerr << "rpmem-bench: unknown command '" << args[0] << "'\n\n";
    print_usage(std::cerr);
    return rpmem::bench::kExitUsage;
}
