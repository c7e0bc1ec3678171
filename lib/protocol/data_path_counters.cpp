// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/data_path_counters.h"

#include <atomic>

namespace rpmem::protocol {

namespace {

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free,
              "the counters page is shared between processes: its words must be lock-free");

void add_to(std::uint64_t& word, std::uint64_t value) noexcept {
    std::atomic_ref<std::uint64_t>(word).fetch_add(value, std::memory_order_relaxed);
}

std::uint64_t load(const std::uint64_t& word) noexcept {
    // atomic_ref needs a non-const referent; the load itself writes nothing.
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(word))
        .load(std::memory_order_relaxed);
}

} // namespace

void DataPathCounterPage::record(std::uint64_t bytes, std::uint64_t service_ns) noexcept {
    add_to(persists, 1);
    add_to(persisted_bytes, bytes);
    add_to(latency_sum_ns, service_ns);
    add_to(latency_counts[LatencyHistogram::bucket_of(service_ns)], 1);
}

void DataPathCounterPage::record_lag(std::uint64_t lag) noexcept {
    add_to(ordered_messages, 1);
    std::atomic_ref<std::uint64_t>(lag_bytes).store(lag, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t> most(max_lag_bytes);
    for (std::uint64_t seen = most.load(std::memory_order_relaxed);
         lag > seen && !most.compare_exchange_weak(seen, lag, std::memory_order_relaxed);)
        ;
}

DataPathCounters DataPathCounterPage::read() const noexcept {
    DataPathCounters counters;
    counters.persists = load(persists);
    counters.persisted_bytes = load(persisted_bytes);
    counters.latency.sum_ns = load(latency_sum_ns);
    for (std::size_t i = 0; i < latency_counts.size(); ++i)
        counters.latency.counts[i] = load(latency_counts[i]);
    counters.ordered_messages = load(ordered_messages);
    counters.lag_bytes = load(lag_bytes);
    counters.max_lag_bytes = load(max_lag_bytes);
    return counters;
}

} // namespace rpmem::protocol
