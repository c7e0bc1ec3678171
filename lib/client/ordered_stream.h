// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "base/error.h"
#include "client/dirty_extents.h"
#include "client/recovery.h"
#include "client/session_usage.h"
#include "protocol/latency_histogram.h"

namespace rpmem::client {

// The lane records travel on, as the stream uses it: persist::InitiatorLane's calls of the same
// names, or a fake in tests.
class RecordLane {
public:
    virtual ~RecordLane() = default;
    // Sends one persist_records message of `records` and returns its sequence number.
    virtual Result<std::uint32_t> send_records(std::span<const std::byte> records,
                                               std::uint64_t behind) = 0;
    // Waits until message `sequence` and every one before it is acknowledged.
    virtual Result<void> wait_acknowledged(std::uint32_t sequence) = 0;
    virtual bool acknowledged(std::uint32_t sequence) const noexcept = 0;
};

// What the stream needs of its replica: the one lane its messages go on.
class StreamLane {
public:
    virtual ~StreamLane() = default;
    // Runs `round` on the stream's lane of the current connection, under that lane's mutex, if
    // the replica is in sync and connected; returns false without running it otherwise.
    virtual bool with_stream_lane(const std::function<void(RecordLane&)>& round) = 0;
    // The lane failed with `why` and the failure policy does not let the replica go degraded:
    // it is broken (sticky errors, as a synchronous persist's failure).
    virtual void stream_broken(const Error& why) = 0;
};

// How far an asynchronous replica is behind, and the most it has been since open.
struct ReplicationLag {
    std::uint64_t bytes = 0;          // queued or in flight, not yet acknowledged
    std::chrono::microseconds age{0}; // since the oldest of those was queued
    std::uint64_t max_bytes = 0;
    std::chrono::microseconds max_age{0};
    std::uint64_t records = 0;  // queued since open (a persist is one or more)
    std::uint64_t messages = 0; // persist_records messages sent
    // The lag each acknowledgement ended: the age of its message's oldest record.
    protocol::LatencyHistogram acknowledged_lag;
};

// Asynchronous replication of one replica (RPMEM_REPLICATION=async): persists are queued as
// records, in the order their calls took the stream's mutex, and a thread of the stream sends
// them in that order, many to a message, on one lane (LaneOperation::persist_records).
//
// Why the replica is always a prefix of the persists:
//  - one order: every persist of every application thread takes the one mutex to queue its
//    records, so a persist that returned before another began is queued before it; the bytes
//    are copied from the local pool when queued (libpmemobj persisted them locally first), so
//    a record carries what its persist promised, not what the pool holds later;
//  - one lane: the records travel in that order in messages on one connection, which delivers
//    its messages in order; the target applies a message's records in order, each copied with
//    8-byte stores and flushed before the next one is touched (RequestHandler), and a message
//    cut short by a dead initiator is never delivered at all;
//  - so at any instant the replica holds records 1..k and, at most, some aligned words of
//    record k+1: what the local pool held after some prefix of its persists, with libpmemobj's
//    8-byte atomicity. libpmemobj recovers any such state, as it recovers from a local crash.
// Lost connection: every record not acknowledged (in flight or still queued) is a missed
// extent, and the replica goes degraded as in synchronous mode (or breaks, by the failure
// policy). While it is not in sync nothing is queued: the caller takes the synchronous path,
// which records missed extents while degraded and, while resyncing, persists synchronously under
// the extent stripes, so the resync keeps its ordering rule (client/recovery.h) unchanged. The
// replica is a prefix again once it is back in sync; during a resync it is not (as in
// synchronous mode, a close before the resync ended leaves it outdated).
//
// Back-pressure: a persist waits while more than max_lag bytes are unacknowledged or the oldest
// was queued more than max_lag_time ago. Thread-safe: any application thread may queue; one
// thread of the stream sends.
class OrderedStream {
public:
    struct Bounds {
        std::uint64_t max_lag = 8ULL << 20;
        std::chrono::microseconds max_lag_time{std::chrono::seconds(1)};
        // How long a persist waits for room before it fails (RPMEM_TIMEOUT; the lane's own
        // waits fail the connection first).
        std::chrono::milliseconds timeout{10000};
    };

    // `pool`: the whole local pool; `message_size`: the most data one message carries (the
    // lane's inline size). `may_degrade`: whether a failed lane may leave sync regardless of
    // the quorum (on-replica-failure = continue).
    OrderedStream(std::span<const std::byte> pool, std::size_t message_size, Recovery& recovery,
                  StreamLane& lane, Bounds bounds, bool may_degrade);
    ~OrderedStream();
    OrderedStream(const OrderedStream&) = delete;
    OrderedStream& operator=(const OrderedStream&) = delete;

    // The call that queues: all three are records; a deep persist's is flushed to the target's
    // deepest domain.
    enum class Call { persist, deep_persist, flush };
    // Queues the local pool's [offset, +length) (checked by the caller) after waiting for room.
    // False when the replica is not in sync: nothing of it was queued and the caller persists
    // synchronously instead. Fails when the replica broke or no room came within the timeout.
    Result<bool> queue(std::size_t offset, std::size_t length, Call call);
    // Waits while the lag is beyond its bounds (what a drain means in asynchronous mode).
    Result<void> wait_within_bounds();
    // Waits until every record queued so far is acknowledged, or has become a missed extent
    // because the replica left sync. ETIMEDOUT after `timeout`, naming the lag.
    Result<void> wait_replicated(std::chrono::milliseconds timeout);
    // The connection goes (under every lane's mutex): every record not acknowledged is missed.
    void retire(const std::function<void(Range)>& missed);
    ReplicationLag lag() const;
    // What the queued calls carried (the caller counts drains).
    UsageCounters usage() const;
    // Sends nothing more and joins the thread; what is left unacknowledged is missed: returns
    // its bytes.
    std::uint64_t stop();

private:
    using Clock = std::chrono::steady_clock;
    struct Batch {
        std::vector<std::byte> bytes; // encoded records
        std::vector<Range> ranges;    // theirs, for the missed extents of a failure
        std::uint64_t end = 0;        // the stream position after it (queued bytes, total)
        Clock::time_point queued;     // its first record's
        std::uint32_t sequence = 0;   // once sent
    };

    void run();
    // Sends what the credits allow and waits for the oldest acknowledgement; an error when the
    // lane failed.
    std::optional<Error> round(RecordLane& lane);
    // Every unacknowledged record becomes a missed extent; the lag is then zero.
    void lose_all_locked(const std::function<void(Range)>& missed);
    void fail_locked(const Error& why);
    bool has_work_locked() const noexcept { return !pending_.empty() || !in_flight_.empty(); }
    std::uint64_t lag_bytes_locked() const noexcept { return queued_ - acknowledged_; }
    std::optional<Clock::time_point> oldest_locked() const noexcept;
    bool within_bounds_locked(std::size_t adding, Clock::time_point now) const noexcept;
    // Waits for `ready` (under the lock), the replica leaving sync, a break or the timeout.
    Result<void> wait_locked(std::unique_lock<std::mutex>& lock, const std::function<bool()>& ready,
                             std::chrono::milliseconds timeout, const char* what);
    void note_lag_locked(Clock::time_point now) noexcept;
    void count_locked(Call call, std::size_t length) noexcept;
    Batch take_free_batch_locked();

    const std::span<const std::byte> pool_;
    const std::size_t message_size_;
    Recovery& recovery_;
    StreamLane& lane_;
    const Bounds bounds_;
    const bool may_degrade_;

    mutable std::mutex mutex_;
    std::condition_variable wake_; // the sender: work or stop
    std::condition_variable room_; // the callers: acknowledgements, failure
    std::deque<Batch> pending_;    // queued, not sent; the back one is being filled
    std::deque<Batch> in_flight_;  // sent, not acknowledged, in order
    std::vector<Batch> free_;      // buffers to reuse
    std::uint64_t queued_ = 0;     // bytes of pool data queued since open
    std::uint64_t acknowledged_ = 0;
    std::uint64_t records_ = 0;
    UsageCounters usage_;
    protocol::LatencyHistogram acknowledged_lag_;
    std::uint64_t messages_ = 0;
    std::uint64_t max_bytes_ = 0;
    Clock::duration max_age_{};
    std::optional<Error> broken_;
    bool sender_idle_ = false;
    unsigned waiting_ = 0; // callers waiting on room_
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace rpmem::client
