// SPDX-License-Identifier: BSD-3-Clause
// client::Recovery against a fake replica (RecoveryAccess): consistency on open and its
// direction proof, degraded -> resync -> in sync, a failure in the middle of a resync, and the
// ordering of a resync copy against a persist of the same range.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "client/extent_digest.h"
#include "client/recovery.h"
#include "pmemobj_pool_image.h"

using namespace std::chrono_literals;
using rpmem::Error;
using rpmem::PoolAttributes;
using rpmem::Result;
using rpmem::client::ExtentLocks;
using rpmem::client::Range;
using rpmem::client::Recovery;
using rpmem::client::SyncQuorum;
using rpmem::client::SyncState;
using rpmem::protocol::ReplicaState;
using rpmem::protocol::ResyncPhase;
using rpmem::test::PmemobjPoolImage;

namespace {

constexpr std::size_t kPoolSize = 256 * 1024;
constexpr std::size_t kDataStart = 4096;

// A replica in memory: `remote` is the target's pool; copies, reads and digests work on it.
class FakeReplica : public rpmem::client::RecoveryAccess {
public:
    FakeReplica()
        : local(kPoolSize)
        , remote(kPoolSize) {}

    std::span<const std::byte> local_pool() const override { return local; }
    std::size_t data_start() const override { return kDataStart; }
    std::string describe() const override { return "fake:1 pool set test.set"; }

    void retire_connection(const std::function<void(Range)>&) override {
        const std::lock_guard lock(mutex);
        connected = false;
    }
    Result<void> reconnect(std::uint64_t generation,
                           const std::function<void()>& installed) override {
        const std::lock_guard lock(mutex);
        asked_generation = generation;
        if (refuse_reconnects > 0) {
            --refuse_reconnects;
            return rpmem::fail(ECONNREFUSED, "target down");
        }
        connected = true;
        installed();
        return {};
    }
    Result<void> copy(std::span<const Range> ranges) override {
        if (on_copy)
            on_copy(ranges);
        const std::lock_guard lock(mutex);
        if (fail_copies > 0) {
            --fail_copies;
            connected = false;
            return rpmem::fail(ECONNRESET, "lane lost");
        }
        for (const Range& range : ranges) {
            std::memcpy(remote.data() + range.offset, local.data() + range.offset, range.length);
            copied_bytes += range.length;
        }
        return {};
    }
    Result<std::vector<std::uint64_t>>
    remote_digests(std::size_t offset, std::size_t length, std::size_t extent_size,
                   const std::function<void(std::uint64_t)>& on_progress) override {
        if (on_progress)
            on_progress(length);
        return rpmem::client::local_digests(remote, offset, length, extent_size);
    }
    Result<void> read_remote(std::span<std::byte> into, std::size_t offset) override {
        std::memcpy(into.data(), remote.data() + offset, into.size());
        return {};
    }
    void report(ResyncPhase phase, std::uint64_t, std::uint64_t) override {
        const std::lock_guard lock(mutex);
        reports.push_back(phase);
    }

    std::vector<std::byte> local;
    std::vector<std::byte> remote;
    std::function<void(std::span<const Range>)> on_copy;
    std::mutex mutex;
    bool connected = true;
    int refuse_reconnects = 0;
    int fail_copies = 0;
    std::uint64_t asked_generation = 0;
    std::uint64_t copied_bytes = 0;
    std::vector<ResyncPhase> reports;
};

Recovery::Options fast_options() {
    return {.first_backoff = 1ms, .max_backoff = 4ms, .progress_interval = 60s};
}

// Waits for `condition` for up to 10 s (no timing is asserted: only that it happens).
template <typename Condition>
bool eventually(Condition condition) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

void fill(std::vector<std::byte>& pool, std::size_t offset, std::size_t length, int value) {
    std::memset(pool.data() + offset, value, length);
}

bool same(const FakeReplica& fake, std::size_t offset, std::size_t length) {
    return std::memcmp(fake.local.data() + offset, fake.remote.data() + offset, length) == 0;
}

} // namespace

TEST_CASE("consistency on open copies only from a proven master") {
    FakeReplica fake;
    PmemobjPoolImage image;
    image.write(fake.local, 20);
    image.write(fake.remote, 20, true);
    fill(fake.local, 16 * 1024, 8192, 0x11);
    fill(fake.remote, 16 * 1024, 8192, 0x22);
    auto quorum = std::make_shared<SyncQuorum>(0);

    SECTION("proven: the differing extents are copied") {
        Recovery recovery(fake, kPoolSize, quorum, fast_options());
        auto outcome =
            recovery.open_check(ReplicaState::inconsistent, image.replica_attributes(), true);
        REQUIRE(outcome);
        CHECK(outcome->proof.proven());
        CHECK(outcome->vouched);
        CHECK(outcome->repaired_bytes == 8192);
        CHECK(same(fake, kDataStart, kPoolSize - kDataStart));
        CHECK(recovery.state() == SyncState::in_sync);
    }
    SECTION("a blank local device: nothing is copied, the session cannot vouch") {
        const std::vector<std::byte> before = fake.remote;
        std::fill(fake.local.begin(), fake.local.end(), std::byte{0});
        Recovery recovery(fake, kPoolSize, quorum, fast_options());
        auto outcome =
            recovery.open_check(ReplicaState::inconsistent, image.replica_attributes(), true);
        REQUIRE(outcome);
        CHECK_FALSE(outcome->proof.proven());
        CHECK_FALSE(outcome->vouched);
        CHECK(fake.remote == before);
        CHECK(fake.copied_bytes == 0);
    }
    SECTION("an older local pool (a restored backup): refused, nothing copied") {
        PmemobjPoolImage::write_descriptor(fake.remote, 30);
        const std::vector<std::byte> before = fake.remote;
        Recovery recovery(fake, kPoolSize, quorum, fast_options());
        auto outcome =
            recovery.open_check(ReplicaState::consistent, image.replica_attributes(), true);
        REQUIRE_FALSE(outcome);
        CHECK(outcome.error().errno_value() == ESTALE);
        CHECK_THAT(outcome.error().message(),
                   Catch::Contains("run 20 here") && Catch::Contains("run 30 on the replica"));
        CHECK(fake.remote == before);
    }
    SECTION("a consistent replica is left alone and vouched for") {
        Recovery recovery(fake, kPoolSize, quorum, fast_options());
        auto outcome =
            recovery.open_check(ReplicaState::consistent, image.replica_attributes(), true);
        REQUIRE(outcome);
        CHECK(outcome->vouched);
        CHECK(fake.copied_bytes == 0);
    }
    SECTION("an inspection (bring_up_to_date false) copies and refuses nothing") {
        Recovery recovery(fake, kPoolSize, quorum, fast_options());
        auto outcome =
            recovery.open_check(ReplicaState::outdated, image.replica_attributes(), false);
        REQUIRE(outcome);
        CHECK(outcome->proof.proven());
        CHECK_FALSE(outcome->vouched);
        CHECK(fake.copied_bytes == 0);
        PmemobjPoolImage::write_descriptor(fake.remote, 30);
        auto older =
            recovery.open_check(ReplicaState::consistent, image.replica_attributes(), false);
        REQUIRE(older);
        CHECK(older->proof.verdict == rpmem::client::MasterProof::Verdict::older);
        CHECK_FALSE(older->vouched);
    }
}

TEST_CASE("degraded, then resynced, then in sync") {
    FakeReplica fake;
    fake.refuse_reconnects = 2;
    Recovery recovery(fake, kPoolSize, std::make_shared<SyncQuorum>(0), fast_options());
    recovery.set_generation(7);
    REQUIRE(recovery.leave_sync(true));
    fill(fake.local, 8192, 4096 * 3, 0x33);
    // What a lane's undrained flushes missed, then the failed persist.
    recovery.mark_missed(8192 + 4096, 8192);
    recovery.degrade("rpmem_persist", 8192, 4096, Error(ECONNRESET, "lost"));
    REQUIRE(eventually([&] { return recovery.state() == SyncState::in_sync; }));
    CHECK(same(fake, 8192, 4096 * 3));
    CHECK(recovery.dirty_extents() == 0);
    CHECK(recovery.last_resync().completed == 1);
    CHECK(recovery.last_resync().bytes == 4096 * 3);
    CHECK(fake.asked_generation == 7);
    const std::lock_guard lock(fake.mutex);
    CHECK(fake.reports.front() == ResyncPhase::started);
    CHECK(fake.reports.back() == ResyncPhase::finished);
}

TEST_CASE("a failure in the middle of a resync degrades again, and the next resync completes") {
    FakeReplica fake;
    fake.fail_copies = 1;
    Recovery recovery(fake, kPoolSize, std::make_shared<SyncQuorum>(0), fast_options());
    REQUIRE(recovery.leave_sync(true));
    // More than one batch (1 MiB) would need a bigger pool: two far-apart runs are two copies.
    fill(fake.local, 4096, 4096, 0x44);
    fill(fake.local, 200 * 1024, 4096, 0x55);
    recovery.mark_missed(200 * 1024, 4096);
    recovery.degrade("rpmem_persist", 4096, 4096, Error(ECONNRESET, "lost"));
    REQUIRE(eventually([&] { return recovery.state() == SyncState::in_sync; }));
    CHECK(same(fake, 4096, 4096));
    CHECK(same(fake, 200 * 1024, 4096));
    CHECK(recovery.dirty_extents() == 0);
    CHECK(fake.fail_copies == 0);
}

TEST_CASE("a resync copy waits for a persist of the same range, so it never lands older bytes") {
    FakeReplica fake;
    Recovery recovery(fake, kPoolSize, std::make_shared<SyncQuorum>(0), fast_options());
    REQUIRE(recovery.leave_sync(true));
    constexpr std::size_t kOffset = 12 * 4096;
    fill(fake.local, kOffset, 4096, 0x01); // what the replica missed

    // A persist of the same extent is under way: it holds its stripes (shared), as the data
    // path does from before it reads the pool until its acknowledgement.
    std::mutex mutex;
    std::condition_variable changed;
    bool holding = false, release = false, persist_done = false;
    std::thread persist([&] {
        const ExtentLocks::Hold stripes(recovery.locks(),
                                        ExtentLocks::stripes_of(kOffset, 4096, 4096), false);
        {
            std::unique_lock lock(mutex);
            holding = true;
            changed.notify_all();
            changed.wait(lock, [&] { return release; });
        }
        // The application's newer store, and its persist landing on the target.
        fill(fake.local, kOffset, 4096, 0x02);
        std::memcpy(fake.remote.data() + kOffset, fake.local.data() + kOffset, 4096);
        const std::lock_guard lock(mutex);
        persist_done = true;
    });
    std::atomic<bool> copied_before_persist{false};
    fake.on_copy = [&](std::span<const Range> ranges) {
        const std::lock_guard lock(mutex);
        for (const Range& range : ranges)
            if (range.offset <= kOffset && kOffset < range.offset + range.length && !persist_done)
                copied_before_persist = true;
    };
    {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return holding; });
    }
    recovery.degrade("rpmem_persist", kOffset, 4096, Error(ECONNRESET, "lost"));
    // The resync reaches the copy and must wait there for the persist's stripes.
    REQUIRE(eventually([&] { return recovery.state() == SyncState::resyncing; }));
    {
        const std::lock_guard lock(mutex);
        release = true;
    }
    changed.notify_all();
    persist.join();
    REQUIRE(eventually([&] { return recovery.state() == SyncState::in_sync; }));
    CHECK_FALSE(copied_before_persist);
    CHECK(std::to_integer<int>(fake.remote[kOffset]) == 0x02);
    CHECK(same(fake, kOffset, 4096));
}

TEST_CASE("stop gives a resync under way its patience, and ends the thread") {
    FakeReplica fake;
    fake.refuse_reconnects = 1000000; // never comes back
    Recovery recovery(fake, kPoolSize, std::make_shared<SyncQuorum>(0), fast_options());
    REQUIRE(recovery.leave_sync(true));
    recovery.degrade("rpmem_persist", 4096, 4096, Error(ECONNRESET, "lost"));
    recovery.stop(0ms);
    CHECK(recovery.state() == SyncState::degraded);
    CHECK(recovery.dirty_extents() == 1);
}
