// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace rpmem::protocol {

// Upper bounds of the buckets of persist service times at the target, in nanoseconds: the
// 1-2-5 steps from 1 µs to 2 s. Fixed, so that histograms of different sessions and workers
// add up, and so that rpmemd_persist_latency_seconds keeps its `le` labels across restarts.
inline constexpr std::array<std::uint64_t, 20> kLatencyBucketBoundsNs = {
    1'000,      2'000,       5'000,       10'000,      20'000,        50'000,        100'000,
    200'000,    500'000,     1'000'000,   2'000'000,   5'000'000,     10'000'000,    20'000'000,
    50'000'000, 100'000'000, 200'000'000, 500'000'000, 1'000'000'000, 2'000'000'000,
};

// A histogram over those buckets: counts[i] holds samples in (bound[i-1], bound[i]], the last
// entry those above the largest bound. A value type; travels in worker packets.
struct LatencyHistogram {
    std::array<std::uint64_t, kLatencyBucketBoundsNs.size() + 1> counts{};
    std::uint64_t sum_ns = 0;

    // The bucket a sample of `ns` falls into.
    static std::size_t bucket_of(std::uint64_t ns) noexcept;

    std::uint64_t count() const noexcept;
    void add(const LatencyHistogram& other) noexcept;
    // The upper bound of the bucket that holds the q-quantile (0 < q <= 1), the largest bound
    // when it lies above them, 0 without samples. An upper estimate: within one bucket's width.
    std::uint64_t quantile_upper_bound_ns(double q) const noexcept;

    friend bool operator==(const LatencyHistogram&, const LatencyHistogram&) = default;
};

} // namespace rpmem::protocol
