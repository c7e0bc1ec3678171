// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstdint>

#include "protocol/latency_histogram.h"

namespace rpmem::protocol {

// What the data path of one session served, as the target counts it: persist messages (inline
// persists and flushes), the bytes they made durable, and their service times at the target
// (from handling the received message to its flush being done). A value type.
struct DataPathCounters {
    std::uint64_t persists = 0;
    std::uint64_t persisted_bytes = 0;
    LatencyHistogram latency;
    // Asynchronous replication: record messages served, and the bytes the initiator still had
    // queued behind the last one when it sent it (how far the replica is behind, at least),
    // and the most of those. Summed over sessions, the lags add up and the most is the most.
    std::uint64_t ordered_messages = 0;
    std::uint64_t lag_bytes = 0;
    std::uint64_t max_lag_bytes = 0;

    void add(const DataPathCounters& other) noexcept {
        persists += other.persists;
        persisted_bytes += other.persisted_bytes;
        latency.add(other.latency);
        ordered_messages += other.ordered_messages;
        lag_bytes += other.lag_bytes;
        max_lag_bytes = max_lag_bytes > other.max_lag_bytes ? max_lag_bytes : other.max_lag_bytes;
    }
};

// Those counters in a page shared by the worker that serves the session (which counts) and
// rpmemd's supervisor (which reads them for status and /metrics). A layout between processes,
// so defined here: plain 64-bit words, no pointers, each accessed through std::atomic_ref with
// relaxed order (statistics: nothing is ordered by them). The supervisor takes whatever numbers
// it finds: a worker its client compromised can only misreport its own sessions.
struct DataPathCounterPage {
    std::uint64_t persists = 0;
    std::uint64_t persisted_bytes = 0;
    std::uint64_t latency_sum_ns = 0;
    std::array<std::uint64_t, LatencyHistogram{}.counts.size()> latency_counts{};
    std::uint64_t ordered_messages = 0;
    std::uint64_t lag_bytes = 0;
    std::uint64_t max_lag_bytes = 0;

    // One persist message of `bytes`, served in `service_ns`. Called by one lane's responder
    // at a time per page word, but several lanes may share a page.
    void record(std::uint64_t bytes, std::uint64_t service_ns) noexcept;
    // One persist_records message, sent with `lag` bytes queued behind it.
    void record_lag(std::uint64_t lag) noexcept;

    // A copy of the counters, read word by word (not one consistent cut, which statistics need
    // not be).
    DataPathCounters read() const noexcept;
};

} // namespace rpmem::protocol
