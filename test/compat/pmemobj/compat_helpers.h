// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "process.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

namespace rpmem::test {

inline constexpr const char* kPoolSize = "32M";

// What every PMDK program of these tests runs with: our librpmem.so.1 first on the library
// path, the sanitizer runtime of our build preloaded into Debian's binaries, local parts
// treated as persistent memory (msync would dominate every figure otherwise), and the client
// settings that reach `rpmemd`.
EnvironmentChanges pmdk_environment(const RpmemdInstance& rpmemd);

RunResult obj_tx(const std::vector<std::string>& args, const EnvironmentChanges& environment);
RunResult pmempool(const std::vector<std::string>& args, const EnvironmentChanges& environment);
// The rpmemctl this build made (RPMEMCTL, set for the tests that need it).
RunResult rpmemctl(std::vector<std::string> args, const EnvironmentChanges& environment);

// Sends librpmem's log to root/librpmem.log instead of the system log, for the test to read;
// returns that path.
std::filesystem::path library_log_in(const TempDir& root, EnvironmentChanges& environment);

// Creates `set`'s pool with `count` records (obj_tx create); the test stops, with obj_tx's
// output, when that fails.
void create_pool(const std::filesystem::path& set, const std::string& count,
                 const EnvironmentChanges& environment);

// Starts the writer `obj_tx run set from count` in `root`: its "committed N" lines come on
// `output`, everything else goes to root/writer.log.
Process spawn_writer(const TempDir& root, const std::filesystem::path& set, const std::string& from,
                     const std::string& count, const EnvironmentChanges& environment, int& output);

// Reads a pmemobj-tx writer's "committed N" lines from `output` until `until` commits or the
// deadline; returns the last N.
std::uint64_t read_commits(int output, std::uint64_t until,
                           std::chrono::steady_clock::time_point deadline);

std::filesystem::path write_file(const std::filesystem::path& path, const std::string& text);
std::string read_file(const std::filesystem::path& path);

// The initiator's set under root/initiator: one local part and a REPLICA line per target.
std::filesystem::path initiator_set(const TempDir& root, const std::vector<std::string>& replicas);
std::filesystem::path initiator_part(const TempDir& root);

// The target's set `name` in rpmemd's pool set directory, with its one part at `part`.
void target_set(const RpmemdInstance& rpmemd, const std::string& name,
                const std::filesystem::path& part);

// What most compat tests start from: a scratch root, one rpmemd, its set remote.set with one
// part at root/target/pool.part0, the initiator's set with one REPLICA line to it, and the
// environment PMDK programs run with. Tests bind its members by name:
//   auto& [root, rpmemd, target_part, set, environment] = setup;
struct OneRemoteReplica {
    explicit OneRemoteReplica(const std::string& name);

    TempDir root;
    RpmemdInstance rpmemd;
    std::filesystem::path target_part;
    std::filesystem::path set;
    EnvironmentChanges environment;
};

// Opens the target's copy as the master replica of a local set whose second replica is the
// initiator's header page followed by the target's data (no data byte from the initiator),
// and runs `obj_tx verify` with `expected_count` ("any" accepts whatever the pool holds).
RunResult verify_target_copy(const TempDir& root, const std::filesystem::path& target_part,
                             const std::string& expected_count,
                             const EnvironmentChanges& environment);

// The N of a successful `obj_tx verify`'s "verified N transactions" line; the test stops when
// the line is missing.
std::uint64_t verified_count(const RunResult& verified);

// verify_target_copy, checked: the test goes on, with obj_tx's output, when it fails.
void check_target_copy_verifies(const TempDir& root, const std::filesystem::path& target_part,
                                const std::string& expected_count,
                                const EnvironmentChanges& environment);

} // namespace rpmem::test
