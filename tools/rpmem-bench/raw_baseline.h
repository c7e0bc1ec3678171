// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "raw_client.h"
#include "result_report.h"
#include "sampling.h"

namespace rpmem::bench {

// The fabric's own round trips, the mark rpmem's figures are divided by: raw's target and
// client on loopback (target pinned to the last of `cpus`, client to the calling thread's CPU,
// both busy-polling), one "raw-<operation>" row per operation and size appended to `report`.
Result<void> measure_raw_baseline(const std::string& provider,
                                  std::span<const RawOperation> operations,
                                  std::span<const std::size_t> sizes, const SampleLimits& limits,
                                  const std::vector<int>& cpus, Report& report);

// The p50 of `operation` at `size` in `report`; 0 when it is not there.
double p50_of(const Report& report, const std::string& operation, std::size_t size);

} // namespace rpmem::bench
