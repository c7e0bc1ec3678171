// SPDX-License-Identifier: BSD-3-Clause
#include "latency_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rpmem::bench {

namespace {

double nearest_rank(const std::vector<std::uint64_t>& sorted, double fraction) {
    const auto rank = static_cast<std::size_t>(std::ceil(fraction * sorted.size()));
    return static_cast<double>(sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1]) /
           1000.0;
}

} // namespace

LatencySummary LatencySummary::of(std::vector<std::uint64_t>& samples_ns) {
    LatencySummary summary;
    if (samples_ns.empty())
        return summary;
    std::sort(samples_ns.begin(), samples_ns.end());
    summary.count = samples_ns.size();
    summary.min_us = static_cast<double>(samples_ns.front()) / 1000.0;
    summary.max_us = static_cast<double>(samples_ns.back()) / 1000.0;
    summary.p50_us = nearest_rank(samples_ns, 0.50);
    summary.p99_us = nearest_rank(samples_ns, 0.99);
    const long double total =
        std::accumulate(samples_ns.begin(), samples_ns.end(), static_cast<long double>(0));
    summary.mean_us = static_cast<double>(total / samples_ns.size() / 1000.0L);
    return summary;
}

} // namespace rpmem::bench
