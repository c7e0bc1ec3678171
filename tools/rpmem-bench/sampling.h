// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "base/error.h"
#include "result_report.h"

namespace rpmem::bench {

// How long one row of a latency benchmark runs: at most `iterations` measured operations and
// at most `duration` seconds, after an unmeasured warm-up of a tenth of the iterations (at
// most 1000).
struct SampleLimits {
    std::size_t iterations = 20000;
    double duration = 2.0;
};

// Runs `once(i)` back to back and summarises the latencies of the measured calls as one
// single-lane, busy-polling row. The first failure ends the row, named after it.
Result<ResultRow> sample_latency(const std::string& name, std::size_t size,
                                 const SampleLimits& limits,
                                 const std::function<Result<void>(std::size_t)>& once);

} // namespace rpmem::bench
