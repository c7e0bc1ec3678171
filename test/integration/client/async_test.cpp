// SPDX-License-Identifier: BSD-3-Clause
// Asynchronous replication (RPMEM_REPLICATION=async) through librpmem.so.1's C entry points,
// two replicas of one local pool as libpmemobj drives them, each rpmemd holding every reply
// 20 ms (inject-reply-delay): persists, flushes and deep persists on every lane are queued;
// rpmem_drain(RPMEM_DRAIN_REPLICATED) waits until both pool files hold every byte; the usage
// records say the sessions were asynchronous and lagged; close waits for what was queued after
// the barrier. Each case runs in a forked child, because
// librpmem reads its settings once per process.
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "client/session_usage.h"
#include "librpmem.h"
#include "open_pair.h"
#include "pool_memory.h"
#include "process.h"
#include "replica_pair.h"

using namespace rpmem::test;

namespace {

constexpr std::size_t kPool = kPoolSize;

struct DelayedPair : ReplicaPair {
    DelayedPair()
        : ReplicaPair("rpmem-async", {"inject-reply-delay = 20ms"}) {}
};

// Writes a stamp into 64 bytes at `offset`.
void stamp(std::byte* pool, std::size_t offset, std::uint64_t value) {
    for (std::size_t word = 0; word < 8; ++word)
        std::memcpy(pool + offset + word * 8, &value, sizeof value);
}

} // namespace

TEST_CASE("async: queued persists reach both replicas in full by the barrier and by close") {
    DelayedPair pair;
    const auto log = pair.root_a / "client.log";
    constexpr int kRounds = 400;
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] =
            open_pair(pair, log, 5000, {{"RPMEM_REPLICATION", "async"}, {"RPMEM_MAX_LAG", "64K"}});
        if (!failure.empty())
            return failure;
        for (int i = 1; i <= kRounds; ++i) {
            const std::size_t offset = (i * 4160) % (kPool - 64);
            stamp(pool, offset, i);
            for (RPMEMpool* rpp : {on_a, on_b}) {
                // libpmemobj's mix: mostly persists, some flush + drain, a deep persist.
                int result = 0;
                if (i % 7 == 0)
                    result = rpmem_flush(rpp, offset, 64, 0, 0) || rpmem_drain(rpp, 0, 0);
                else if (i % 11 == 0)
                    result = rpmem_deep_persist(rpp, offset, 64, 0);
                else
                    result = rpmem_persist(rpp, offset, 64, 0, 0);
                if (result != 0)
                    return std::string("round ") + std::to_string(i) + ": " + rpmem_errormsg();
            }
        }
        for (RPMEMpool* rpp : {on_a, on_b})
            if (rpmem_drain(rpp, 0, RPMEM_DRAIN_REPLICATED) != 0)
                return std::string("the barrier: ") + rpmem_errormsg();
        // The barrier returned: both files hold every byte, before close.
        const std::string local(reinterpret_cast<const char*>(pool), kPool);
        if (read_text(pair.part_a()) != local)
            return "after the barrier, a's pool file differs from the local pool";
        if (read_text(pair.part_b()) != local)
            return "after the barrier, b's pool file differs from the local pool";
        // More, then close without a barrier: close waits for them.
        for (int i = 1; i <= 50; ++i) {
            stamp(pool, 4096 * i, 1000 + i);
            if (rpmem_persist(on_a, 4096 * i, 64, 0, 0) != 0 ||
                rpmem_persist(on_b, 4096 * i, 64, 0, 0) != 0)
                return std::string("after the barrier: ") + rpmem_errormsg();
        }
        if (rpmem_close(on_b) != 0 || rpmem_close(on_a) != 0)
            return std::string("closing: ") + rpmem_errormsg();
        const std::string closed(reinterpret_cast<const char*>(pool), kPool);
        if (read_text(pair.part_a()) != closed || read_text(pair.part_b()) != closed)
            return "after close, a pool file differs from the local pool";
        return "";
    });
    INFO(outcome.message << "\n" << read_text(log));
    REQUIRE(outcome.status == 0);
    auto records = rpmem::client::read_usage_records(ReplicaPair::usage_file(log));
    REQUIRE(records);
    REQUIRE(records->size() == 2);
    for (const rpmem::client::SessionUsage& record : *records) {
        INFO(record.target);
        CHECK(record.asynchronous);
        CHECK(record.lanes == 1); // the stream's lane is librpmem's own
        CHECK(record.persists + record.deep_persists + record.flushes == kRounds + 50);
        // Every reply takes 20 ms: the second persist found the first unacknowledged.
        CHECK(record.max_lag_bytes >= 128);
        CHECK(record.max_lag_bytes <= 64 * 1024 + 64);
        CHECK(record.lag_p99_us >= 20'000);
        CHECK(record.posted_by_sibling == 0); // no fan-out onto an asynchronous replica
    }
}
