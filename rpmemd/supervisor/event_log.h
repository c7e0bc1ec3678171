// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "protocol/daemon_event.h"
#include "protocol/reply.h"

namespace rpmem::daemon {

// rpmemd's event log for `rpmemctl events` (and the counters of /metrics): every session
// opened, closed or lost, replica state change, resync report and refusal, numbered in the
// order recorded. Keeps the newest `capacity` events in memory; a reader that falls behind
// learns from the reply's oldest sequence that it missed some. Owned by the Daemon; thread-safe
// (sessions record from the handler threads, refusals come from the I/O threads).
class EventLog {
public:
    using Clock = std::function<std::chrono::system_clock::time_point()>;

    explicit EventLog(
        std::size_t capacity, Clock now = [] { return std::chrono::system_clock::now(); });

    // Numbers `event`, stamps it with the time, keeps it and tells the observers; returns its
    // sequence number.
    std::uint64_t record(protocol::DaemonEvent event);

    // Up to `max` events with a sequence above `after_sequence` that `visible` accepts (all
    // when it is empty), oldest first, with the range the log still keeps.
    protocol::EventsReply
    after(std::uint64_t after_sequence, std::size_t max,
          const std::function<bool(const protocol::DaemonEvent&)>& visible = {}) const;

    // How many events of each kind were recorded since the log began (index: the kind's wire
    // value), kept also when the events themselves have been dropped.
    using Totals = std::array<std::uint64_t, 16>;
    Totals totals() const;

private:
    const std::size_t capacity_;
    const Clock now_;
    mutable std::mutex mutex_;
    std::deque<protocol::DaemonEvent> events_; // under mutex_
    std::uint64_t next_sequence_ = 1;          // under mutex_
    Totals totals_{};                          // under mutex_
};

} // namespace rpmem::daemon
