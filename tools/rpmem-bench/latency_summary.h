// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <vector>

namespace rpmem::bench {

// Order statistics of a set of latency samples, in microseconds. A value type.
struct LatencySummary {
    std::size_t count = 0;
    double min_us = 0;
    double p50_us = 0;
    double p99_us = 0;
    double max_us = 0;
    double mean_us = 0;

    // Sorts `samples_ns` (nanoseconds) in place. Percentiles are nearest-rank.
    static LatencySummary of(std::vector<std::uint64_t>& samples_ns);
};

} // namespace rpmem::bench
