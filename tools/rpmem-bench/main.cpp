// SPDX-License-Identifier: BSD-3-Clause
// rpmem-bench: performance measurements. CLI11 dispatches to the subcommands, each in its own
// file: `raw` (the fabric limit), `persist` (rpmem's data path), `pmemobj` (whole transactions),
// `resync` (a degraded replica catching up) and `digest` (comparing a pool with its replica).
#include <iostream>

#include <spdlog/spdlog.h>

#include "command.h"

int main(int argc, char** argv) {
    // The in-process target (rpmemd's FabricTarget) logs its sessions at info; here only its
    // warnings belong beside the results.
    spdlog::set_level(spdlog::level::warn);
    using namespace rpmem::bench;
    CLI::App app("rpmem-bench: rpmem's performance against the raw fabric, same run",
                 "rpmem-bench");
    rpmem::tools::configure_program(app,
                                    "rpmem-bench COMMAND --help shows the arguments of a command.");
    CommandOutput output{std::cout, std::cerr};
    add_raw_command(app, output);
    add_persist_command(app, output);
    add_sessions_command(app, output);
    add_resync_command(app, output);
    add_digest_command(app, output);
#ifdef RPMEM_BENCH_PMEMOBJ
    add_pmemobj_command(app, output);
#endif
    return rpmem::tools::run_command_line(app, argc, argv, output);
}
