// SPDX-License-Identifier: BSD-3-Clause
// Opt-in asynchronous replication (issue 33) with Debian's unmodified libpmemobj: rpmem_persist
// returns before the replica has the range, so a killed initiator may take acknowledged
// transactions with it, but the replica applies persists in issue order and must always hold a
// gap-free prefix of them. Each run kills the writer (SIGKILL) at a random moment, promotes the
// target's copy with rpmemctl and has libpmemobj check it: the counter N and every slot exactly
// as transactions 0..N-1 left them. A run replays with ASYNC_PREFIX_SEED set to the seed the
// test prints. The negative control (failpoint builds) shows the check catches a replica that
// applies a batch out of order.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include "compat_helpers.h"

using namespace rpmem::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRuns = 20;
// Transactions pmemobj-tx create runs: a clean close, so none of them may ever be lost.
constexpr std::uint64_t kCreated = 5;
// Small against a transaction's few KiB of persists: the replica really trails the writer.
constexpr const char* kMaxLag = "256K";
// The kill comes after this many "committed N" lines, plus up to kMaxExtraDelay.
constexpr std::uint64_t kFewestCommits = 20;
constexpr std::uint64_t kMostCommits = 600;
constexpr std::chrono::microseconds kMaxExtraDelay = 3ms;

std::uint64_t seed_for_this_run() {
    if (const char* text = std::getenv("ASYNC_PREFIX_SEED"); text != nullptr && *text != '\0')
        return std::stoull(text, nullptr, 0);
    std::random_device device;
    return (std::uint64_t{device()} << 32) | device();
}

// One rpmemd that takes rpmemctl's failover requests (admin-client), and the environment of the
// writer: asynchronous, with a lag bound small enough to matter.
struct AsyncTarget {
    explicit AsyncTarget(const EnvironmentChanges& rpmemd_environment)
        : root("rpmem-compat-async")
        , rpmemd(root, options(rpmemd_environment))
        , environment(pmdk_environment(rpmemd))
        , tools(rpmemd.client_environment()) {
        environment["RPMEM_REPLICATION"] = "async";
        environment["RPMEM_MAX_LAG"] = kMaxLag;
    }

    static RpmemdInstance::Options options(const EnvironmentChanges& rpmemd_environment) {
        RpmemdInstance::Options options;
        options.config_lines = {"admin-client = rpmem-test"};
        options.environment = rpmemd_environment;
        return options;
    }

    TempDir root;
    RpmemdInstance rpmemd;
    EnvironmentChanges environment;
    EnvironmentChanges tools;
};

// When run_once kills the writer: once it printed `commits` "committed N" lines, and `delay`
// later. Without one, the writer runs kFinishedRun transactions to its clean close.
struct Kill {
    std::uint64_t commits = 0;
    std::chrono::microseconds delay{0};
};
constexpr std::uint64_t kFinishedRun = 300;

struct RunOutcome {
    std::uint64_t committed = 0; // the last "committed N" the writer printed
    std::string role;            // rpmemctl role --json once the session was gone
    bool forced = false;         // the promote needed --force
    RunResult verified;          // pmemobj-tx verify SET any on the promoted set
};

// A fresh pool on a set of its own (a promoted set serves no replica any more), the writer
// killed as `kill` says, the target's copy promoted and verified.
RunOutcome run_once(AsyncTarget& target, int index, const std::optional<Kill>& kill) {
    const TempDir& root = target.root;
    const std::string name = "async-" + std::to_string(index) + ".set";
    const fs::path target_part = root / "target" / std::to_string(index) / "pool.part0";
    target_set(target.rpmemd, name, target_part);
    const fs::path set = initiator_set(root, {target.rpmemd.target() + " " + name});
    fs::remove(initiator_part(root));
    create_pool(set, std::to_string(kCreated), target.environment);

    RunOutcome outcome;
    const std::size_t log_start = read_file(root / "writer.log").size(); // one log for all runs
    int output = -1;
    const std::string count = kill ? "100000000" : std::to_string(kFinishedRun);
    Process writer =
        spawn_writer(root, set, std::to_string(kCreated), count, target.environment, output);
    const auto deadline = Clock::now() + 60s;
    if (kill) {
        outcome.committed = read_commits(output, kCreated + kill->commits, deadline);
        REQUIRE(outcome.committed >= kCreated + kill->commits);
        std::this_thread::sleep_for(kill->delay);
        writer.signal(SIGKILL);
    }
    // Whatever the writer printed before it died was committed as far as it knew.
    while (auto line = read_line(output, deadline))
        if (line->rfind("committed ", 0) == 0)
            outcome.committed = std::stoull(line->substr(10));
    ::close(output);
    const auto status = writer.wait_for(10s);
    INFO("writer's log:\n" << read_file(root / "writer.log").substr(log_start));
    REQUIRE(status == (kill ? 128 + SIGKILL : 0));

    // rpmemd notices the closed connection on its own; until the session let the pool go,
    // role says it is in use (and promote would have to end that session itself).
    const auto gone_by = Clock::now() + 15s;
    while (true) {
        auto role = rpmemctl({"role", target.rpmemd.target(), name, "--json"}, target.tools);
        INFO(role.output());
        REQUIRE(role.status == 0);
        outcome.role = role.out;
        if (role.out.find("\"in_use\":false") != std::string::npos)
            break;
        REQUIRE(Clock::now() < gone_by);
        std::this_thread::sleep_for(100ms);
    }
    // A session lost while it replicated synchronously leaves a copy promote takes as it is;
    // one that may lack acknowledged writes (async) needs --force, the loss this test bounds.
    outcome.forced = outcome.role.find("\"promotable\":true") == std::string::npos;
    std::vector<std::string> promote{"promote", target.rpmemd.target(), name};
    if (outcome.forced)
        promote.emplace_back("--force");
    auto promoted = rpmemctl(promote, target.tools);
    if (promoted.status != 0) // rpmemd's log only then: it grows with every run
        FAIL(outcome.role << promoted.output() << "rpmemd's log:\n"
                          << read_file(target.rpmemd.log_file()));

    // The promoted set opens as a pool of its own, in place, as after a real failover
    // (verify_target_copy's two-replica set no longer opens: promote links the copy to itself).
    outcome.verified = obj_tx({"verify", (target.rpmemd.poolset_dir() / name).string(), "any"},
                              target.environment);
    fs::remove(target_part); // 32 MiB a run
    return outcome;
}

} // namespace

TEST_CASE("async replication: the replica of a killed initiator, promoted, holds a gap-free "
          "prefix of its transactions") {
    const std::uint64_t seed = seed_for_this_run();
    WARN("ASYNC_PREFIX_SEED=" << seed);
    std::mt19937_64 random(seed);
    std::uniform_int_distribution<std::uint64_t> commits(kFewestCommits, kMostCommits);
    std::uniform_int_distribution<std::int64_t> delay(0, kMaxExtraDelay.count());
    AsyncTarget target({});
    const auto started = Clock::now();

    std::int64_t largest_loss = 0;
    std::int64_t total_loss = 0;
    int forced = 0;
    for (int index = 0; index < kRuns; ++index) {
        const Kill kill{commits(random), std::chrono::microseconds(delay(random))};
        INFO("run " << index << " of seed " << seed << ": killed after " << kill.commits
                    << " commits and " << kill.delay.count() << " us");
        const RunOutcome outcome = run_once(target, index, kill);
        INFO(outcome.verified.output());
        REQUIRE(outcome.verified.status == 0);
        const std::uint64_t verified = verified_count(outcome.verified);
        CHECK(verified >= kCreated);
        // Negative when the replica has transactions whose line the writer never printed.
        const std::int64_t loss =
            static_cast<std::int64_t>(outcome.committed) - static_cast<std::int64_t>(verified);
        largest_loss = index == 0 ? loss : std::max(largest_loss, loss);
        total_loss += loss;
        forced += outcome.forced ? 1 : 0;
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    WARN(kRuns << " runs in " << took.count() << " ms (seed " << seed
               << "): transactions lost (last committed seen - verified): largest " << largest_loss
               << ", mean " << static_cast<double>(total_loss) / kRuns << "; promotes that needed "
               << "--force: " << forced);
}

#ifdef RPMEM_FAILPOINTS
// The control shows the check above can fail: a target that applies each async batch's
// records last-to-first leaves older bytes over newer ones (the counter behind the slots).
// It FAILS while replication is synchronous (no batches, nothing reversed), that is until the
// target side of async replication is in.
TEST_CASE("negative control: a target applying async batches out of order leaves a copy that "
          "is not a prefix",
          "[negative-control]") {
    constexpr int kControlRuns = 4;
    const std::uint64_t seed = seed_for_this_run();
    WARN("ASYNC_PREFIX_SEED=" << seed << " (negative control)");
    std::mt19937_64 random(seed);
    std::uniform_int_distribution<std::uint64_t> commits(kFewestCommits, kMostCommits);
    AsyncTarget target({{"RPMEM_FAILPOINT", std::string("apply-records-reversed")}});

    int failed = 0;
    std::string statuses;
    for (int index = 0; index < kControlRuns; ++index) {
        // Every other run closes cleanly: the batches up to the close count too.
        std::optional<Kill> kill;
        if (index % 2 == 0)
            kill = Kill{commits(random), 0us};
        INFO("control run " << index << " of seed " << seed << ": "
                            << (kill ? "killed after " + std::to_string(kill->commits) + " commits"
                                     : "closed after " + std::to_string(kFinishedRun)));
        const RunOutcome outcome = run_once(target, index, kill);
        statuses += " " + std::to_string(outcome.verified.status);
        if (outcome.verified.status != 0)
            ++failed;
    }
    WARN("verify's status in " << kControlRuns << " control runs:" << statuses);
    CHECK(failed >= 1);
}
#endif
