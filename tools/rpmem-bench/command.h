// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "command_line.h"

namespace rpmem::bench {

using tools::add_command;
using tools::CommandOutput;
using tools::kExitFailure;
using tools::kExitOk;
using tools::kExitUsage;

// Each rpmem-bench subcommand, in its own file, adds itself to the program's CLI11 App. Results
// go to `out` (or the file its --output names), diagnostics to `err`.

// `raw` (raw_command.cpp): the fabric round trips the persistence methods are made of, without
// the replication layers.
void add_raw_command(CLI::App& app, CommandOutput& output);

// `persist` (persist_command.cpp): rpmem's replicated persists against the raw round trip of
// the same shape, measured in the same run.
void add_persist_command(CLI::App& app, CommandOutput& output);

// `pmemobj` (pmemobj_command.cpp, built where libpmemobj is): small libpmemobj transactions on
// a replicated pool against persists per transaction x the raw round trip.
void add_pmemobj_command(CLI::App& app, CommandOutput& output);

// `sessions` (sessions_command.cpp): one session's persist latency while many others on the
// same rpmemd persist at a steady rate, against the same session alone.
void add_sessions_command(CLI::App& app, CommandOutput& output);

// `resync` (resync_command.cpp): the online resync of a degraded replica, with a real rpmemd
// killed and restarted, against the fabric's raw write bandwidth.
void add_resync_command(CLI::App& app, CommandOutput& output);

// `digest` (digest_command.cpp): comparing an unchanged pool with its replica by digests, with a
// real rpmemd, against hashing the same bytes in process.
void add_digest_command(CLI::App& app, CommandOutput& output);

} // namespace rpmem::bench
