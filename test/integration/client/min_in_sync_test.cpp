// SPDX-License-Identifier: BSD-3-Clause
// min-in-sync-replicas through librpmem.so.1's C entry points: two replicas of one local pool
// (the same address and size, as libpmemobj opens two REPLICA lines), each on an rpmemd of its
// own. With the default (all), the failure policy (error) answers the first lost replica: its
// persist fails. With min-in-sync-replicas = 1 the lost replica goes degraded and its persists
// return 0 while the other stays in sync; losing that one too reaches the policy. Each case
// runs in a forked child, because librpmem reads its settings once per process.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "librpmem.h"
#include "open_pair.h"
#include "pool_memory.h"
#include "process.h"
#include "replica_pair.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

using namespace rpmem::test;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kPool = kPoolSize;

// Persists fresh 64-byte blocks on `rpp` until one returns `wanted` (0 or -1) after the log
// shows `log_text` (empty: at once), for at most 20 s; what happened otherwise.
std::string persist_until(RPMEMpool* rpp, std::byte* pool, int wanted,
                          const std::filesystem::path& log, const std::string& log_text,
                          const char* which) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    std::uint64_t stamp = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const std::size_t offset = (stamp % (kPool / 64)) * 64;
        ++stamp;
        std::memcpy(pool + offset, &stamp, sizeof stamp);
        const int got = rpmem_persist(rpp, offset, 64, 0, 0);
        const bool logged = log_text.empty() || read_text(log).find(log_text) != std::string::npos;
        if (got == wanted && logged)
            return "";
        if (got != wanted && wanted == -1 && logged)
            continue; // the failure was absorbed; go on until the policy answers
        if (got != wanted)
            return std::string(which) + ": rpmem_persist returned " + std::to_string(got) + " (" +
                   rpmem_errormsg() + ")";
        std::this_thread::sleep_for(1ms);
    }
    return std::string(which) + ": no persist returned " + std::to_string(wanted) +
           " with the log showing '" + log_text + "' within 20 s:\n" + read_text(log);
}

struct Pair : ReplicaPair {
    Pair()
        : ReplicaPair("rpmem-min-in-sync") {}
};

// In the forked child: both replicas opened with `min_in_sync`, one persist each.
OpenPair open_both(Pair& pair, const std::filesystem::path& log, const char* min_in_sync) {
    OpenPair open = open_pair(pair, log, 3000, {{"RPMEM_MIN_IN_SYNC_REPLICAS", min_in_sync}});
    if (open.failure.empty() &&
        (rpmem_persist(open.a, 0, 64, 0, 0) != 0 || rpmem_persist(open.b, 0, 64, 0, 0) != 0))
        open.failure = std::string("a first persist failed: ") + rpmem_errormsg();
    return open;
}

} // namespace

TEST_CASE("default min-in-sync-replicas (all): one lost replica of two reaches the policy") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_both(pair, log, "all");
        if (!failure.empty())
            return failure;
        ::kill(pair.b.process().pid(), SIGKILL); // not its child: no reaping here
        if (auto failed = persist_until(on_b, pool, -1, log, "", "b"); !failed.empty())
            return failed;
        if (auto fine = persist_until(on_a, pool, 0, log, "", "a"); !fine.empty())
            return fine;
        if (read_text(log).find("replica degraded") != std::string::npos)
            return "b went degraded although every replica must stay in sync:\n" + read_text(log);
        rpmem_close(on_b);
        return rpmem_close(on_a) == 0 ? "" : std::string("closing a: ") + rpmem_errormsg();
    });
    INFO(outcome.message);
    CHECK(outcome.status == 0);
}

TEST_CASE("min-in-sync-replicas = 1: the lost replica goes degraded while the other is in sync") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_both(pair, log, "1");
        if (!failure.empty())
            return failure;
        ::kill(pair.b.process().pid(), SIGKILL); // not its child: no reaping here
        // b's persists go on returning 0: degraded, recorded for its resync.
        if (auto absorbed = persist_until(on_b, pool, 0, log, "replica degraded", "b");
            !absorbed.empty())
            return absorbed;
        if (read_text(log).find("1 of 2 replicas in sync, at least 1 required") ==
            std::string::npos)
            return "the degraded line does not give the count:\n" + read_text(log);
        if (auto fine = persist_until(on_a, pool, 0, log, "", "a"); !fine.empty())
            return fine;
        // a is the last one in sync: losing it reaches the policy (error).
        ::kill(pair.a.process().pid(), SIGKILL);
        if (auto failed = persist_until(on_a, pool, -1, log, "", "a"); !failed.empty())
            return failed;
        if (read_text(log).find(pair.a.target() + ": pool set pool.set is broken") ==
            std::string::npos)
            return "a's failure is not logged as breaking it:\n" + read_text(log);
        rpmem_close(on_b);
        rpmem_close(on_a);
        return "";
    });
    INFO(outcome.message);
    CHECK(outcome.status == 0);
}
