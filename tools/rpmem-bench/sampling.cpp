// SPDX-License-Identifier: BSD-3-Clause
#include "sampling.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "fabric/deadline.h"

namespace rpmem::bench {

using fabric::Clock;

Result<ResultRow> sample_latency(const std::string& name, std::size_t size,
                                 const SampleLimits& limits,
                                 const std::function<Result<void>(std::size_t)>& once) {
    const std::size_t warmup = std::min<std::size_t>(limits.iterations / 10, 1000);
    for (std::size_t i = 0; i < warmup; ++i)
        if (auto done = once(i); !done)
            return fail(std::move(done.error()).add_context(name));
    std::vector<std::uint64_t> samples;
    samples.reserve(limits.iterations);
    const auto limit =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.duration));
    const Clock::time_point start = Clock::now();
    Clock::time_point before = start;
    for (std::size_t i = 0; i < limits.iterations; ++i) {
        if (auto done = once(i); !done)
            return fail(std::move(done.error()).add_context(name));
        const Clock::time_point after = Clock::now();
        samples.push_back(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(after - before).count()));
        before = after;
        if (after - start >= limit)
            break;
    }
    ResultRow row;
    row.operation = name;
    row.size = size;
    row.lanes = 1;
    row.wait = "spin";
    row.summarise(samples, std::chrono::duration<double>(before - start).count(), size);
    return row;
}

} // namespace rpmem::bench
