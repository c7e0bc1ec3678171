// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace rpmem::protocol {

std::size_t LatencyHistogram::bucket_of(std::uint64_t ns) noexcept {
    return static_cast<std::size_t>(
        std::lower_bound(kLatencyBucketBoundsNs.begin(), kLatencyBucketBoundsNs.end(), ns) -
        kLatencyBucketBoundsNs.begin());
}

std::uint64_t LatencyHistogram::count() const noexcept {
    std::uint64_t total = 0;
    for (std::uint64_t n : counts)
        total += n;
    return total;
}

void LatencyHistogram::add(const LatencyHistogram& other) noexcept {
    for (std::size_t i = 0; i < counts.size(); ++i)
        counts[i] += other.counts[i];
    sum_ns += other.sum_ns;
}

std::uint64_t LatencyHistogram::quantile_upper_bound_ns(double q) const noexcept {
    const std::uint64_t total = count();
    if (total == 0)
        return 0;
    // The rank of the q-quantile among the samples, 1-based.
    const auto rank = static_cast<std::uint64_t>(
        std::max(1.0, std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(total))));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kLatencyBucketBoundsNs.size(); ++i) {
        seen += counts[i];
        if (seen >= rank)
            return kLatencyBucketBoundsNs[i];
    }
    return kLatencyBucketBoundsNs.back();
}

} // namespace rpmem::protocol
