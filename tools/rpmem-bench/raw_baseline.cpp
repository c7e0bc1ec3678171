// SPDX-License-Identifier: BSD-3-Clause
#include "raw_baseline.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "fabric/waiter.h"
#include "raw_target.h"

namespace rpmem::bench {

Result<void> measure_raw_baseline(const std::string& provider,
                                  std::span<const RawOperation> operations,
                                  std::span<const std::size_t> sizes, const SampleLimits& limits,
                                  const std::vector<int>& cpus, Report& report) {
    const std::size_t max_size = *std::max_element(sizes.begin(), sizes.end());
    RawTargetConfig config;
    config.provider = provider;
    config.region_size = std::max<std::size_t>(kBatchWrites * max_size, 4096);
    config.cpu = cpus.size() >= 2 ? cpus.back() : -1;
    auto target = RawTarget::start(config);
    if (!target)
        return fail(std::move(target.error()));
    (*target)->set_spin(std::chrono::nanoseconds(-1));
    auto client = RawClient::connect(provider, config.address, (*target)->service(), 1,
                                     config.region_size, (*target)->region());
    if (!client)
        return fail(std::move(client.error()));
    (*client)->set_wait_policy(
        fabric::WaitPolicy{fabric::WaitPolicy::kSpinForever, std::chrono::milliseconds(20)});
    for (RawOperation operation : operations) {
        for (std::size_t size : sizes) {
            auto row = sample_latency(
                fmt::format("raw-{}", to_string(operation)), size, limits,
                [&](std::size_t) { return (*client)->run_once(operation, 0, size); });
            if (!row)
                return fail(std::move(row.error()));
            // A batch moves kBatchWrites writes of `size` per iteration.
            row->mb_per_s =
                row->ops_per_s * static_cast<double>(payload_bytes(operation, size)) / 1e6;
            report.rows.push_back(std::move(*row));
        }
    }
    return {};
}

double p50_of(const Report& report, const std::string& operation, std::size_t size) {
    for (const ResultRow& row : report.rows)
        if (row.operation == operation && row.size == size)
            return row.latency.p50_us;
    return 0;
}

} // namespace rpmem::bench
