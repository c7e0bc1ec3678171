// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <ostream>
#include <span>
#include <string_view>

namespace rpmem::bench {

// Exit statuses shared by every rpmem-bench subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1; // the benchmark could not run or its data check failed
inline constexpr int kExitUsage = 2;   // the command line itself is wrong

// One rpmem-bench subcommand: its name, a one-line summary for the top-level help, and the
// function that runs it with the arguments after its name. Results go to `out` (or the file
// the subcommand's --output names), diagnostics to `err`; it returns an exit status.
struct Command {
    std::string_view name;
    std::string_view summary;
    int (*run)(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
};

// `rpmem-bench raw ...` (raw_command.cpp): the fabric round trips the persistence methods are
// made of, without the replication layers.
int run_raw_command(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

// `rpmem-bench sessions ...` (sessions_command.cpp): one session's persist latency while many
// others on the same rpmemd persist at a steady rate, against the same session alone.
int run_sessions_command(std::span<const std::string_view> args, std::ostream& out,
                         std::ostream& err);

// `rpmem-bench persist ...` (persist_command.cpp): rpmem's replicated persists against the raw
// round trip of the same shape, measured in the same run.
int run_persist_command(std::span<const std::string_view> args, std::ostream& out,
                        std::ostream& err);

// `rpmem-bench pmemobj ...` (pmemobj_command.cpp, built where libpmemobj is): small libpmemobj
// transactions on a replicated pool against persists per transaction x the raw round trip.
int run_pmemobj_command(std::span<const std::string_view> args, std::ostream& out,
                        std::ostream& err);

// `rpmem-bench resync ...` (resync_command.cpp): the online resync of a degraded replica, with
// a real rpmemd killed and restarted, against the fabric's raw write bandwidth.
int run_resync_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);

} // namespace rpmem::bench
