// SPDX-License-Identifier: BSD-3-Clause
// The directory of open sessions behind status and metrics.
#include <catch2/catch.hpp>

#include "rpmemd/supervisor/session_directory.h"

using namespace rpmem;
using namespace rpmem::daemon;

namespace {

DataPathCounters counters(std::uint64_t persists, std::uint64_t ns_each) {
    DataPathCounters c;
    c.persists = persists;
    c.persisted_bytes = persists * 64;
    c.latency.counts[protocol::LatencyHistogram::bucket_of(ns_each)] = persists;
    c.latency.sum_ns = persists * ns_each;
    return c;
}

} // namespace

TEST_CASE("a listing lives as long as its session and shows what the session set") {
    auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
    SessionDirectory directory([&] { return now; });
    {
        auto alice = directory.add({7, "alice", "::1", 4000});
        auto bob = directory.add({8, "bob", "10.0.0.2", 5000});
        now += std::chrono::milliseconds(1500);
        protocol::SessionStatus pool;
        pool.pool_set = "a.set";
        pool.provider = "tcp";
        pool.persist_method = protocol::PersistMethod::gpspm;
        pool.lanes = 2;
        pool.state = protocol::ReplicaState::inconsistent;
        pool.generation = 3;
        alice.set_pool(pool);
        alice.set_counters([] { return counters(10, 15'000); });
        alice.set_resync(true, 10, 100);

        auto all = directory.snapshot();
        REQUIRE(all.sessions.size() == 2);
        const auto& a = all.sessions[0];
        CHECK(a.id == 7);
        CHECK(a.peer == "[::1]:4000");
        CHECK(a.connected_ms == 1500);
        CHECK(a.pool_set == "a.set");
        CHECK(a.generation == 3);
        CHECK(a.persists == 10);
        CHECK(a.latency_p50_ns == 20'000);
        CHECK(a.latency_p99_ns == 20'000);
        CHECK(a.resync_active);
        CHECK(all.sessions[1].peer == "10.0.0.2:5000");
        CHECK(all.totals.persists == 10);

        // Another identity's counters still count in the totals, its row is not shown.
        auto bobs = directory.snapshot([](std::string_view id) { return id == "bob"; });
        REQUIRE(bobs.sessions.size() == 1);
        CHECK(bobs.sessions[0].identity == "bob");
        CHECK(bobs.totals.persists == 10);

        alice.clear_pool();
        auto cleared = directory.snapshot();
        CHECK(cleared.sessions[0].pool_set.empty());
        CHECK_FALSE(cleared.sessions[0].resync_active);
        CHECK(cleared.sessions[0].persists == 0);
        // The closed data path's counters stay in the totals.
        CHECK(cleared.totals.persists == 10);
        CHECK(directory.size() == 2);
    }
    CHECK(directory.size() == 0);
    CHECK(directory.snapshot().totals.persisted_bytes == 640);
}
