// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/event_log.h"

#include <algorithm>

namespace rpmem::daemon {

EventLog::EventLog(std::size_t capacity, Clock now)
    : capacity_(std::max<std::size_t>(capacity, 1))
    , now_(std::move(now)) {}

std::uint64_t EventLog::record(protocol::DaemonEvent event) {
    const auto since_epoch = now_().time_since_epoch();
    event.unix_time_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count()));
    {
        std::lock_guard lock(mutex_);
        event.sequence = next_sequence_++;
        if (events_.size() == capacity_)
            events_.pop_front();
        events_.push_back(event);
        const auto kind = static_cast<std::size_t>(event.kind);
        if (kind < totals_.size())
            ++totals_[kind];
    }
    return event.sequence;
}

protocol::EventsReply
EventLog::after(std::uint64_t after_sequence, std::size_t max,
                const std::function<bool(const protocol::DaemonEvent&)>& visible) const {
    protocol::EventsReply reply;
    std::lock_guard lock(mutex_);
    if (events_.empty())
        return reply;
    reply.oldest_sequence = events_.front().sequence;
    reply.newest_sequence = events_.back().sequence;
    // Sequences are consecutive in the deque: index straight to the first one wanted.
    std::size_t index = after_sequence < reply.oldest_sequence
                            ? 0
                            : static_cast<std::size_t>(after_sequence - reply.oldest_sequence + 1);
    for (; index < events_.size() && reply.events.size() < max; ++index) {
        const protocol::DaemonEvent& event = events_[index];
        if (!visible || visible(event))
            reply.events.push_back(event);
    }
    return reply;
}

EventLog::Totals EventLog::totals() const {
    std::lock_guard lock(mutex_);
    return totals_;
}

} // namespace rpmem::daemon
