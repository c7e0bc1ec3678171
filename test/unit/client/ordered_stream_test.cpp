// SPDX-License-Identifier: BSD-3-Clause
// client::OrderedStream against a fake lane and a fake replica: the replica is a prefix of the
// persists at every message it applies, a lag beyond its bound holds persists back until
// acknowledgements come, a failed lane turns every unacknowledged record into a missed extent
// and degrades the replica, and a barrier that cannot be met times out naming the lag.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "client/ordered_stream.h"
#include "client/recovery.h"
#include "protocol/lane_message.h"

using namespace std::chrono_literals;
using rpmem::Result;
using rpmem::client::OrderedStream;
using rpmem::client::Range;
using rpmem::client::RecordLane;
using rpmem::client::Recovery;
using rpmem::client::StreamLane;
using rpmem::client::SyncQuorum;
using rpmem::client::SyncState;
namespace protocol = rpmem::protocol;

namespace {

constexpr std::size_t kPoolSize = 1 << 20;
constexpr std::size_t kMessage = 4096;

// Never reconnects: a degraded replica stays degraded, its missed extents countable.
class NoReconnect final : public rpmem::client::RecoveryAccess {
public:
    explicit NoReconnect(std::span<const std::byte> pool)
        : pool_(pool) {}
    std::span<const std::byte> local_pool() const override { return pool_; }
    std::size_t data_start() const override { return 0; }
    std::string describe() const override { return "fake:1 pool set test.set"; }
    void retire_connection(const std::function<void(Range)>&) override {}
    Result<void> reconnect(std::uint64_t, const std::function<void()>&) override {
        return rpmem::fail(ECONNREFUSED, "target down");
    }
    Result<void> copy(std::span<const Range>) override { return rpmem::fail(ENOTCONN, "down"); }
    Result<std::vector<std::uint64_t>>
    remote_digests(std::size_t, std::size_t, std::size_t,
                   const std::function<void(std::uint64_t)>&) override {
        return rpmem::fail(ENOTCONN, "down");
    }
    Result<void> read_remote(std::span<std::byte>, std::size_t) override {
        return rpmem::fail(ENOTCONN, "down");
    }
    void report(protocol::ResyncPhase, std::uint64_t, std::uint64_t) override {}

private:
    std::span<const std::byte> pool_;
};

// A target in memory: each message sent is applied to `remote` when the test (or `auto_ack`)
// acknowledges it, record by record, and `on_applied` sees the pool after every message.
class FakeLane final : public RecordLane, public StreamLane {
public:
    Result<std::uint32_t> send_records(std::span<const std::byte> records, std::uint64_t) override {
        std::unique_lock lock(mutex);
        if (fail_sends)
            return rpmem::fail(ECONNRESET, "lane 0: the target went away");
        sent.emplace_back(records.begin(), records.end());
        ++last_sent;
        changed.notify_all();
        return last_sent;
    }
    Result<void> wait_acknowledged(std::uint32_t sequence) override {
        std::unique_lock lock(mutex);
        for (;;) {
            if (auto_ack)
                apply_locked(sequence);
            if (acknowledged_locked(sequence))
                return {};
            if (fail_waits)
                return rpmem::fail(ETIMEDOUT, "lane 0: no answer");
            changed.wait_for(lock, 5ms);
        }
    }
    bool acknowledged(std::uint32_t sequence) const noexcept override {
        return sequence <= last_applied;
    }

    bool with_stream_lane(const std::function<void(RecordLane&)>& round) override {
        round(*this);
        return true;
    }
    void stream_broken(const rpmem::Error&) override { broken = true; }

    // Applies (and so acknowledges) every message up to `sequence`.
    void release(std::uint32_t sequence) {
        const std::lock_guard lock(mutex);
        apply_locked(sequence);
        changed.notify_all();
    }
    std::uint32_t sent_count() {
        const std::lock_guard lock(mutex);
        return last_sent;
    }

    std::vector<std::byte> remote = std::vector<std::byte>(kPoolSize);
    std::function<void(const std::vector<std::byte>&)> on_applied;
    std::atomic<bool> auto_ack{true};
    std::atomic<bool> fail_sends{false};
    std::atomic<bool> fail_waits{false};
    std::atomic<bool> broken{false};

private:
    bool acknowledged_locked(std::uint32_t sequence) const { return sequence <= last_applied; }
    void apply_locked(std::uint32_t sequence) {
        while (last_applied < sequence && last_applied < last_sent) {
            const std::vector<std::byte>& records = sent[last_applied];
            // As RequestHandler does, from a message as received (header included).
            std::vector<std::byte> message(protocol::kLaneHeaderSize);
            message.insert(message.end(), records.begin(), records.end());
            for (std::size_t at = 0; at < records.size();) {
                const protocol::LaneRecord record = protocol::lane_record_at(message, at);
                const auto data = protocol::lane_record_data(message, at, record);
                std::memcpy(remote.data() + record.offset, data.data(), data.size());
                at += protocol::lane_record_size(record.length);
            }
            ++last_applied;
            if (on_applied)
                on_applied(remote);
        }
    }

    std::mutex mutex;
    std::condition_variable changed;
    std::deque<std::vector<std::byte>> sent;
    std::uint32_t last_sent = 0;
    std::uint32_t last_applied = 0;
};

struct Fixture {
    std::vector<std::byte> local = std::vector<std::byte>(kPoolSize);
    NoReconnect access{local};
    Recovery recovery{access, kPoolSize, std::make_shared<SyncQuorum>(0)};
    FakeLane lane;

    OrderedStream::Bounds bounds(std::uint64_t max_lag) const {
        return {.max_lag = max_lag, .max_lag_time = 10s, .timeout = 2000ms};
    }
};

// Transaction i of a toy program: slot i % kSlots := i + 1, then the counter := i + 1, each
// its own persist (as libpmemobj's undo log orders them).
constexpr std::size_t kSlots = 64;
constexpr std::size_t kCounter = 8192;
constexpr std::size_t kSlotBase = 16384;

// Queued (not refused, not failed); Catch's assertions are not for other threads.
bool queued(OrderedStream& stream, std::size_t offset, std::size_t length) {
    auto result = stream.queue(offset, length, OrderedStream::Call::persist);
    return result && *result;
}

std::uint64_t word_at(const std::vector<std::byte>& pool, std::size_t offset) {
    std::uint64_t value = 0;
    std::memcpy(&value, pool.data() + offset, sizeof value);
    return value;
}

} // namespace

TEST_CASE("the replica is a prefix of the persists after every message it applies") {
    Fixture f;
    std::size_t checked = 0;
    bool prefix = true;
    f.lane.on_applied = [&](const std::vector<std::byte>& remote) {
        // Counter c: transactions 0..c-1 done, so every slot holds its last one below c (or
        // the next transaction's, whose slot persist comes before its counter persist).
        const std::uint64_t c = word_at(remote, kCounter);
        for (std::size_t slot = 0; slot < kSlots; ++slot) {
            const std::uint64_t value = word_at(remote, kSlotBase + slot * 8);
            const std::uint64_t last = c > slot ? (c - 1 - slot) / kSlots * kSlots + slot + 1 : 0;
            const bool next = value == c + 1 && c % kSlots == slot;
            if (value != last && !next)
                prefix = false;
        }
        ++checked;
    };
    OrderedStream stream(f.local, kMessage, f.recovery, f.lane, f.bounds(64 * 1024), true);
    // Three threads, one order: each transaction is taken under a lock as a program's lock
    // would; what a thread persists after another's returned is queued after it.
    std::mutex program;
    std::uint64_t next = 0;
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&] {
            for (;;) {
                const std::lock_guard lock(program);
                if (next == 3000)
                    return;
                const std::uint64_t i = next++;
                const std::uint64_t value = i + 1;
                const std::size_t slot = kSlotBase + (i % kSlots) * 8;
                std::memcpy(f.local.data() + slot, &value, 8);
                refused += queued(stream, slot, 8) ? 0 : 1;
                std::memcpy(f.local.data() + kCounter, &value, 8);
                refused += queued(stream, kCounter, 8) ? 0 : 1;
            }
        });
    for (auto& thread : threads)
        thread.join();
    CHECK(refused == 0);
    REQUIRE(stream.wait_replicated(2000ms));
    CHECK(prefix);
    CHECK(checked > 1);
    CHECK(word_at(f.lane.remote, kCounter) == 3000);
    CHECK(std::memcmp(f.lane.remote.data(), f.local.data(), kPoolSize) == 0);
    const auto lag = stream.lag();
    CHECK(lag.bytes == 0);
    CHECK(lag.records == 6000);
    CHECK(lag.messages == f.lane.sent_count());
    CHECK(stream.usage().persists == 6000);
    CHECK(stream.usage().bytes == 6000 * 8);
    CHECK(f.recovery.state() == SyncState::in_sync);
}

TEST_CASE("a persist larger than a message goes as several records, in order") {
    Fixture f;
    OrderedStream stream(f.local, kMessage, f.recovery, f.lane, f.bounds(1 << 20), true);
    for (std::size_t i = 0; i < 3 * kMessage; ++i)
        f.local[kSlotBase + i] = static_cast<std::byte>(i * 7 + 1);
    REQUIRE(*stream.queue(kSlotBase, 3 * kMessage, OrderedStream::Call::deep_persist));
    REQUIRE(stream.wait_replicated(2000ms));
    CHECK(std::memcmp(f.lane.remote.data(), f.local.data(), kPoolSize) == 0);
    CHECK(stream.lag().records == 4); // 4080 bytes a record at most
    CHECK(stream.usage().deep_persists == 1);
}

TEST_CASE("beyond max-lag a persist waits for acknowledgements (back-pressure)") {
    Fixture f;
    f.lane.auto_ack = false;
    OrderedStream stream(f.local, kMessage, f.recovery, f.lane, f.bounds(64 * 1024), true);
    // 64 KiB queued, nothing acknowledged: within the bound.
    for (std::size_t i = 0; i < 16; ++i)
        REQUIRE(*stream.queue(kSlotBase + i * 4096, 4096, OrderedStream::Call::flush));
    std::atomic<bool> returned{false};
    std::atomic<bool> went{false};
    std::thread beyond([&] {
        went = queued(stream, kSlotBase + 16 * 4096, 8);
        returned = true;
    });
    // It waits as long as nothing is acknowledged.
    std::this_thread::sleep_for(100ms);
    CHECK_FALSE(returned);
    CHECK(stream.lag().bytes == 64 * 1024);
    f.lane.release(~0U);
    beyond.join();
    CHECK(went);
    CHECK(stream.lag().max_bytes >= 64 * 1024);
    f.lane.auto_ack = true;
    f.lane.release(~0U);
    REQUIRE(stream.wait_replicated(2000ms));
}

TEST_CASE("a barrier that cannot be met times out, naming the lag") {
    Fixture f;
    f.lane.auto_ack = false;
    OrderedStream stream(f.local, kMessage, f.recovery, f.lane, f.bounds(1 << 20), true);
    REQUIRE(*stream.queue(kSlotBase, 100, OrderedStream::Call::persist));
    auto waited = stream.wait_replicated(50ms);
    REQUIRE_FALSE(waited);
    CHECK(waited.error().errno_value() == ETIMEDOUT);
    CHECK_THAT(waited.error().message(), Catch::Contains("100 bytes"));
    f.lane.release(~0U);
    f.lane.auto_ack = true;
    REQUIRE(stream.wait_replicated(2000ms));
    CHECK(stream.stop() == 0);
}

TEST_CASE("a failed lane: every unacknowledged record is missed and the replica degrades") {
    Fixture f;
    f.lane.auto_ack = false;
    OrderedStream stream(f.local, kMessage, f.recovery, f.lane, f.bounds(1 << 20), true);
    REQUIRE(*stream.queue(kSlotBase, 8, OrderedStream::Call::persist));
    REQUIRE(*stream.queue(kSlotBase + 512 * 1024, 8, OrderedStream::Call::persist));
    f.lane.fail_waits = true;
    // The sender meets the failure; the persists made meanwhile were queued or go the
    // synchronous way (false) once the replica is degraded.
    for (int i = 0; i < 200 && f.recovery.state() == SyncState::in_sync; ++i)
        std::this_thread::sleep_for(5ms);
    REQUIRE(f.recovery.state() == SyncState::degraded);
    CHECK(f.recovery.dirty_extents() >= 2);
    CHECK_FALSE(f.lane.broken);
    CHECK(stream.lag().bytes == 0);
    auto after = stream.queue(kSlotBase, 8, OrderedStream::Call::persist);
    REQUIRE(after);
    CHECK_FALSE(*after);                 // the caller's synchronous path records it
    CHECK(stream.wait_replicated(50ms)); // nothing left to wait for: it is missed instead
}

TEST_CASE("a failed lane under error or abort breaks the replica") {
    Fixture f;
    f.lane.fail_sends = true;
    OrderedStream stream(f.local, kMessage, f.recovery, f.lane, f.bounds(1 << 20), false);
    REQUIRE(*stream.queue(kSlotBase, 8, OrderedStream::Call::persist));
    for (int i = 0; i < 200 && !f.lane.broken; ++i)
        std::this_thread::sleep_for(5ms);
    CHECK(f.lane.broken);
    auto after = stream.queue(kSlotBase, 8, OrderedStream::Call::persist);
    REQUIRE_FALSE(after);
    CHECK(after.error().errno_value() == ECONNRESET);
    CHECK(f.recovery.state() == SyncState::in_sync); // broken, not degraded
}
