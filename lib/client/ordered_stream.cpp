// SPDX-License-Identifier: BSD-3-Clause
#include "client/ordered_stream.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "protocol/lane_message.h"

namespace rpmem::client {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

} // namespace

OrderedStream::OrderedStream(std::span<const std::byte> pool, std::size_t message_size,
                             Recovery& recovery, StreamLane& lane, Bounds bounds, bool may_degrade)
    : pool_(pool)
    , message_size_(message_size)
    , recovery_(recovery)
    , lane_(lane)
    , bounds_(bounds)
    , may_degrade_(may_degrade) {
    thread_ = std::thread([this] { run(); });
}

OrderedStream::~OrderedStream() {
    stop();
}

std::uint64_t OrderedStream::stop() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
    const std::lock_guard lock(mutex_);
    const std::uint64_t lost = lag_bytes_locked();
    lose_all_locked([this](Range range) { recovery_.mark_missed(range.offset, range.length); });
    room_.notify_all();
    return lost;
}

std::optional<OrderedStream::Clock::time_point> OrderedStream::oldest_locked() const noexcept {
    if (!in_flight_.empty())
        return in_flight_.front().queued;
    if (!pending_.empty())
        return pending_.front().queued;
    return std::nullopt;
}

bool OrderedStream::within_bounds_locked(std::size_t adding, Clock::time_point now) const noexcept {
    const std::uint64_t behind = lag_bytes_locked();
    // A record larger than the bound still goes, alone.
    if (behind != 0 && behind + adding > bounds_.max_lag)
        return false;
    const auto oldest = oldest_locked();
    return !oldest || now - *oldest <= bounds_.max_lag_time;
}

void OrderedStream::note_lag_locked(Clock::time_point now) noexcept {
    max_bytes_ = std::max(max_bytes_, lag_bytes_locked());
    if (const auto oldest = oldest_locked())
        max_age_ = std::max(max_age_, now - *oldest);
}

Result<void> OrderedStream::wait_locked(std::unique_lock<std::mutex>& lock,
                                        const std::function<bool()>& ready, milliseconds timeout,
                                        const char* what) {
    const Clock::time_point deadline = Clock::now() + timeout;
    ++waiting_;
    // The sender wakes us after each acknowledgement and on a failure; the slice re-reads the
    // clock for the age bound, which no acknowledgement may come to change.
    constexpr milliseconds kSlice{10};
    while (!ready() && !broken_ && recovery_.state() == SyncState::in_sync) {
        const Clock::time_point now = Clock::now();
        if (now >= deadline) {
            --waiting_;
            return fail(
                ETIMEDOUT,
                fmt::format(
                    "{}: the replica stayed {} bytes and {} ms behind for {} ms", what,
                    lag_bytes_locked(),
                    duration_cast<milliseconds>(now - oldest_locked().value_or(now)).count(),
                    timeout.count()));
        }
        room_.wait_until(lock, std::min(deadline, now + kSlice));
    }
    --waiting_;
    if (broken_)
        return fail(*broken_);
    return {};
}

OrderedStream::Batch OrderedStream::take_free_batch_locked() {
    Batch batch;
    if (!free_.empty()) {
        batch = std::move(free_.back());
        free_.pop_back();
        batch.bytes.clear();
        batch.ranges.clear();
    }
    batch.bytes.reserve(message_size_);
    return batch;
}

Result<bool> OrderedStream::queue(std::size_t offset, std::size_t length, Call call) {
    const bool deep = call == Call::deep_persist;
    std::unique_lock lock(mutex_);
    const std::size_t most = message_size_ - protocol::kLaneRecordHeaderSize;
    for (std::size_t done = 0; done < length;) {
        if (broken_)
            return fail(*broken_);
        if (recovery_.state() != SyncState::in_sync || stopping_) {
            if (done == 0)
                return false;
            count_locked(call, length);
            // Left sync part way: what was queued is missed with the rest of the stream; the
            // rest of this persist is the synchronous path's (degraded: recorded).
            recovery_.mark_missed(offset + done, length - done);
            return true;
        }
        const std::size_t piece = std::min(most, length - done);
        Clock::time_point now = Clock::now();
        if (!within_bounds_locked(piece, now)) {
            if (auto room = wait_locked(
                    lock, [&] { return within_bounds_locked(piece, Clock::now()); },
                    bounds_.timeout, "waiting for room in the replication queue");
                !room)
                return fail(std::move(room.error()));
            continue; // the state may have changed meanwhile
        }
        const std::size_t size = protocol::lane_record_size(piece);
        if (pending_.empty() || pending_.back().bytes.size() + size > message_size_) {
            pending_.push_back(take_free_batch_locked());
            pending_.back().queued = now;
        }
        Batch& batch = pending_.back();
        const std::size_t at = batch.bytes.size();
        batch.bytes.resize(at + size);
        const std::size_t where = offset + done;
        protocol::encode(protocol::LaneRecord{where, static_cast<std::uint32_t>(piece),
                                              deep ? protocol::kRecordDeep : std::uint8_t{0}},
                         pool_.subspan(where, piece), std::span(batch.bytes).subspan(at));
        batch.ranges.push_back({where, piece});
        queued_ += piece;
        batch.end = queued_;
        ++records_;
        done += piece;
        note_lag_locked(now);
        if (done == length)
            count_locked(call, length);
        // One wake-up per idle spell: a sender that is busy finds the records on its own.
        if (sender_idle_) {
            sender_idle_ = false;
            wake_.notify_one();
        }
    }
    return true;
}

void OrderedStream::count_locked(Call call, std::size_t length) noexcept {
    switch (call) {
    case Call::persist:
        ++usage_.persists;
        break;
    case Call::deep_persist:
        ++usage_.deep_persists;
        break;
    case Call::flush:
        ++usage_.flushes;
        break;
    }
    usage_.bytes += length;
}

UsageCounters OrderedStream::usage() const {
    const std::lock_guard lock(mutex_);
    return usage_;
}

Result<void> OrderedStream::wait_within_bounds() {
    std::unique_lock lock(mutex_);
    if (within_bounds_locked(0, Clock::now()))
        return broken_ ? fail(*broken_) : Result<void>{};
    return wait_locked(
        lock, [&] { return within_bounds_locked(0, Clock::now()); }, bounds_.timeout,
        "rpmem_drain");
}

Result<void> OrderedStream::wait_replicated(milliseconds timeout) {
    std::unique_lock lock(mutex_);
    const std::uint64_t target = queued_;
    return wait_locked(
        lock, [&] { return acknowledged_ >= target; }, timeout,
        "waiting for the replica to hold every persist");
}

void OrderedStream::lose_all_locked(const std::function<void(Range)>& missed) {
    for (std::deque<Batch>* batches : {&in_flight_, &pending_}) {
        for (Batch& batch : *batches) {
            for (const Range& range : batch.ranges)
                missed(range);
            free_.push_back(std::move(batch));
        }
        batches->clear();
    }
    acknowledged_ = queued_;
}

void OrderedStream::retire(const std::function<void(Range)>& missed) {
    const std::lock_guard lock(mutex_);
    lose_all_locked(missed);
    room_.notify_all();
}

void OrderedStream::fail_locked(const Error& why) {
    lose_all_locked([this](Range range) { recovery_.mark_missed(range.offset, range.length); });
    if (recovery_.state() == SyncState::in_sync) {
        if (recovery_.leave_sync(may_degrade_)) {
            recovery_.degrade("asynchronous replication", 0, 0, why);
        } else {
            broken_ = why;
            lane_.stream_broken(why);
        }
    }
    room_.notify_all();
}

ReplicationLag OrderedStream::lag() const {
    const std::lock_guard lock(mutex_);
    const Clock::time_point now = Clock::now();
    const auto oldest = oldest_locked();
    return {.bytes = lag_bytes_locked(),
            .age = oldest ? duration_cast<microseconds>(now - *oldest) : microseconds(0),
            .max_bytes = max_bytes_,
            .max_age = duration_cast<microseconds>(max_age_),
            .records = records_,
            .messages = messages_,
            .acknowledged_lag = acknowledged_lag_};
}

std::optional<Error> OrderedStream::round(RecordLane& lane) {
    std::unique_lock lock(mutex_);
    while (!pending_.empty() && in_flight_.size() < protocol::kLaneCredits) {
        Batch batch = std::move(pending_.front());
        pending_.pop_front();
        const std::uint64_t behind = queued_ - batch.end;
        // Queueing goes on while this thread sends.
        lock.unlock();
        auto sent = lane.send_records(batch.bytes, behind);
        lock.lock();
        in_flight_.push_back(std::move(batch));
        if (!sent)
            return std::move(sent.error());
        in_flight_.back().sequence = *sent;
        ++messages_;
    }
    if (in_flight_.empty())
        return std::nullopt;
    const std::uint32_t oldest = in_flight_.front().sequence;
    lock.unlock();
    auto acknowledged = lane.wait_acknowledged(oldest);
    lock.lock();
    if (!acknowledged)
        return std::move(acknowledged.error());
    const Clock::time_point now = Clock::now();
    while (!in_flight_.empty() && lane.acknowledged(in_flight_.front().sequence)) {
        const auto lag =
            std::chrono::duration_cast<std::chrono::nanoseconds>(now - in_flight_.front().queued)
                .count();
        const std::uint64_t ns = lag > 0 ? static_cast<std::uint64_t>(lag) : 0;
        ++acknowledged_lag_.counts[protocol::LatencyHistogram::bucket_of(ns)];
        acknowledged_lag_.sum_ns += ns;
        acknowledged_ = in_flight_.front().end;
        free_.push_back(std::move(in_flight_.front()));
        in_flight_.pop_front();
    }
    if (waiting_ > 0)
        room_.notify_all();
    return std::nullopt;
}

void OrderedStream::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        sender_idle_ = true;
        wake_.wait(lock, [&] { return stopping_ || has_work_locked(); });
        sender_idle_ = false;
        if (stopping_)
            return;
        lock.unlock();
        std::optional<Error> failed;
        const bool ran = lane_.with_stream_lane([&](RecordLane& lane) { failed = round(lane); });
        lock.lock();
        if (!ran) {
            // Not in sync (another path degraded it, or it is resyncing): the records are
            // missed extents, which the resync copies.
            lose_all_locked(
                [this](Range range) { recovery_.mark_missed(range.offset, range.length); });
            room_.notify_all();
        } else if (failed) {
            fail_locked(*failed);
        }
    }
}

} // namespace rpmem::client
