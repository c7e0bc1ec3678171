// SPDX-License-Identifier: BSD-3-Clause
// What client::Replica offers the two parties that drive its lanes besides the application:
// Recovery (RecoveryAccess: drop and replace the connection, copy missed ranges, report) and the
// sibling replicas of the fan-out (FanOutMember::post_ahead). The data-path calls and the
// session's lifecycle are in replica.cpp.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/failpoint.h"
#include "channel/client.h"
#include "client/lane_set.h"
#include "client/logger.h"
#include "client/replica.h"
#include "protocol/lane_message.h"
#include "protocol/request.h"
#include "protocol/version.h"

namespace rpmem::client {

bool Replica::post_ahead(std::size_t offset, std::size_t length, unsigned lane) {
    // Never onto an asynchronous replica: the range would reach it out of its stream's order.
    if (stream_ || lane >= lane_count_ || length == 0 || offset < data_start_ ||
        offset >= pool_.size() || length > pool_.size() - offset ||
        broken_.load(std::memory_order_acquire))
        return false;
    LaneGuard& guard = guards_[lane];
    const std::unique_lock lock(guard.mutex, std::try_to_lock);
    // Busy: its owner (a thread of the application, or the resync) goes on undisturbed, and
    // our own call persists the range when it comes.
    if (!lock.owns_lock())
        return false;
    if (recovery_.state() != SyncState::in_sync || !connection_)
        return false;
    persist::InitiatorLane& on = connection_->lanes->lane(lane);
    // One message, sent without waiting: a sibling's call never waits on this replica (a
    // stalled target, or posts nobody drained, cost it nothing).
    if (length > on.inline_size() || !on.can_send_now())
        return false;
    const std::span<const std::byte> range = pool_.subspan(offset, length);
    guard.ahead.begin(range);
    // Strict: an inline message is at least what a relaxed persist promises, and carries a
    // copy of the bytes made now (an RMA write would read them later).
    if (!on.flush(offset, length, false))
        return false; // our own call meets the failure and applies our policy
    // Pending like a flush: a connection dropped before our call marks the range missed.
    guard.add_pending(offset, length);
    guard.ahead.posted(connection_.get(), offset, range);
    return true;
}

// Makes sure no lane uses the connection, then drops it. Flushes never drained on it are
// missed extents.
void Replica::retire_connection(const std::function<void(Range)>& missed) {
    std::vector<std::unique_lock<std::mutex>> held;
    held.reserve(connected_lanes_);
    for (unsigned l = 0; l < connected_lanes_; ++l) {
        held.emplace_back(guards_[l].mutex);
        if (const Range pending = guards_[l].take_pending(); pending.length != 0)
            missed(pending);
        guards_[l].ahead.forget(); // posted on the connection that goes now
    }
    if (stream_)
        stream_->retire(missed); // its records not acknowledged on the connection that goes
    connection_.reset();
}

Result<void> Replica::reconnect(std::uint64_t generation, const std::function<void()>& installed) {
    auto reconnected = connect(false, connected_lanes_, nullptr, generation);
    if (reconnected && (*reconnected)->lanes->size() < connected_lanes_)
        reconnected = fail(EAGAIN, fmt::format("the target granted {} of the {} lanes",
                                               (*reconnected)->lanes->size(), connected_lanes_));
    if (!reconnected)
        return fail(std::move(reconnected.error()));
    std::vector<std::unique_lock<std::mutex>> held;
    for (unsigned l = 0; l < connected_lanes_; ++l)
        held.emplace_back(guards_[l].mutex);
    connection_ = std::move(*reconnected);
    installed();
    return {};
}

// Lane 0, and the other lanes that are free now (the application's persists keep theirs): the
// copies go round them without waiting, then each lane drains once. Each copy is a relaxed
// flush: RMA writes straight from the local pool, then (gpspm) one flush message for the range,
// which the target answers after it persisted the range; not inline messages that the target
// would copy a second time. The caller's stripe hold covers the provider reading the local pool
// too: the writes are read out before the lane's drain returns.
Result<void> Replica::copy(std::span<const Range> ranges) {
    std::vector<std::unique_lock<std::mutex>> locked;
    locked.emplace_back(guards_[0].mutex);
    if (recovery_.state() == SyncState::degraded || !connection_)
        return fail(ENOTCONN, fmt::format("{}: the replica is not connected", describe()));
    std::vector<unsigned> lanes{0};
    for (unsigned l = 1; l < connection_->lanes->size(); ++l) {
        std::unique_lock lane(guards_[l].mutex, std::try_to_lock);
        if (lane.owns_lock()) {
            locked.push_back(std::move(lane));
            lanes.push_back(l);
        }
    }
    bool listed_flush = protocol::has_capability(connection_->control->hello().capabilities,
                                                 protocol::Capability::flush_list);
#ifdef RPMEM_FAILPOINTS
    // Test builds only: RPMEM_FAILPOINT=copy-without-flush-list copies as to an older target.
    if (failpoint_is("copy-without-flush-list"))
        listed_flush = false;
#endif
    Result<void> sent;
    if (listed_flush) {
        // A share of the ranges per lane, each share RMA writes and one flush_list message.
        std::vector<protocol::LaneRange> listed(ranges.size());
        for (std::size_t i = 0; i < ranges.size(); ++i)
            listed[i] = {ranges[i].offset, ranges[i].length};
        const std::span<const protocol::LaneRange> all(listed);
        const std::size_t share = (listed.size() + lanes.size() - 1) / lanes.size();
        for (std::size_t i = 0, first = 0; first < listed.size() && sent; ++i, first += share)
            sent = connection_->lanes->lane(lanes[i]).flush_ranges(
                all.subspan(first, std::min(share, listed.size() - first)));
    } else {
        // An older target: a flush message per range.
        for (std::size_t i = 0; i < ranges.size() && sent; ++i)
            sent = connection_->lanes->lane(lanes[i % lanes.size()])
                       .flush(ranges[i].offset, ranges[i].length, true);
    }
    for (const unsigned l : lanes)
        if (sent)
            sent = connection_->lanes->lane(l).drain();
    return sent;
}

void Replica::report(protocol::ResyncPhase phase, std::uint64_t done, std::uint64_t total) {
    if (!connection_)
        return;
    // For rpmemctl status and events; the copy goes on whatever the answer.
    auto reported = connection_->control->call(protocol::ResyncReport{phase, done, total});
    if (!reported)
        logger().debug("{}: reporting the resync to the target: {}", describe(),
                       reported.error().message());
}

Result<void> Replica::read_remote(std::span<std::byte> into, std::size_t offset) {
    const std::lock_guard lock(guards_[0].mutex);
    if (!connection_)
        return fail(ENOTCONN, fmt::format("{}: the replica is not connected", describe()));
    return connection_->lanes->lane(0).read(into, offset);
}

} // namespace rpmem::client
