// SPDX-License-Identifier: BSD-3-Clause
// Degraded mode with Debian's unmodified libpmemobj (RPMEM_ON_REPLICA_FAILURE=continue): rpmemd
// is killed mid-run and comes back; the program completes every transaction without an error,
// and the target's copy alone then holds all of them (pmempool check and libpmemobj agree).
// And an initiator killed while degraded: the next open through the REPLICA set repairs the
// replica before libpmemobj uses it.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include "compat_helpers.h"

using namespace rpmem::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
// The target's copy alone: pmempool check finds the pair (the copy as master, the initiator's
// header over the copy's data as replica) consistent, and libpmemobj sees `expected`
// transactions in it.
void check_target_copy(const TempDir& root, const fs::path& target_part,
                       const std::string& expected, const EnvironmentChanges& environment) {
    check_target_copy_verifies(root, target_part, expected, environment);
    auto checked =
        pmempool({"check", "-v", (root / "failover" / "failover.set").string()}, environment);
    INFO(checked.output());
    CHECK(checked.status == 0);
}

// Both cases: librpmem goes on without a failed replica and says so at warn level; a 2 s timeout
// notices the killed rpmemd soon.
void continue_on_replica_failure(EnvironmentChanges& environment) {
    environment["RPMEM_ON_REPLICA_FAILURE"] = "continue";
    environment["RPMEM_LOG_LEVEL"] = "warn";
    environment["RPMEM_TIMEOUT"] = "2000";
}

} // namespace

TEST_CASE("continue: rpmemd killed and back, every transaction completes and is replicated") {
    OneRemoteReplica setup("rpmem-compat-degraded");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    continue_on_replica_failure(environment);
    environment["PMEMOBJ_TX_PAUSE_US"] = "1000";

    create_pool(set, "1", environment);

    constexpr std::uint64_t kTransactions = 6000;
    int output = -1;
    Process writer =
        spawn_writer(root, set, "1", std::to_string(kTransactions - 1), environment, output);
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    REQUIRE(read_commits(output, 500, deadline) >= 500);
    rpmemd.kill(SIGKILL);
    std::this_thread::sleep_for(2s);
    rpmemd.restart();

    const std::uint64_t committed = read_commits(output, kTransactions, deadline);
    ::close(output);
    auto status = writer.wait_for(30s);
    const std::string log = read_file(root / "writer.log");
    INFO("writer log:\n" << log);
    REQUIRE(status);
    CHECK(*status == 0);
    CHECK(committed == kTransactions);
    CHECK_THAT(log, Catch::Contains("replica degraded"));
    CHECK_THAT(log, Catch::Contains("replica back in sync"));

    REQUIRE(rpmemd.stop() == 0);
    check_target_copy(root, target_part, std::to_string(kTransactions), environment);
}

TEST_CASE("continue: the initiator killed while degraded; the next open repairs the replica") {
    OneRemoteReplica setup("rpmem-compat-degraded-kill");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    continue_on_replica_failure(environment);

    create_pool(set, "1", environment);

    int output = -1;
    Process writer = spawn_writer(root, set, "1", "100000000", environment, output);
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    const std::uint64_t before = read_commits(output, 300, deadline);
    REQUIRE(before >= 300);
    rpmemd.kill(SIGKILL);
    // Degraded: the writer goes on alone.
    const std::uint64_t degraded = read_commits(output, before + 2000, deadline);
    REQUIRE(degraded >= before + 2000);
    writer.signal(SIGKILL);
    (void)writer.wait_for(10s);
    ::close(output);

    rpmemd.restart();
    // The open through the REPLICA set finds the replica inconsistent and copies the local
    // pool to it before libpmemobj goes on; verify sees the local pool's count.
    auto reopened = obj_tx({"verify", set.string(), "any"}, environment);
    INFO(reopened.output());
    REQUIRE(reopened.status == 0);
    const std::uint64_t count = verified_count(reopened);
    CHECK(count >= degraded);

    REQUIRE(rpmemd.stop() == 0);
    check_target_copy(root, target_part, std::to_string(count), environment);
}
