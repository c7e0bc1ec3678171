// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <filesystem>

#include "base/error.h"

struct pmemobjpool;

namespace rpmem::bench {

// A libpmemobj pool running the small-transaction workload: each transaction snapshots one
// 64-byte slot of the root object and its commit counter, rewrites both and commits, the
// shape of a typical small update. Unaware of rpmem: whether it replicates is up to the pool
// set file, exactly as for any libpmemobj application. Closed when the object goes.
class WorkloadPool {
public:
    static Result<WorkloadPool> create(const std::filesystem::path& pool_set);
    static Result<WorkloadPool> open(const std::filesystem::path& pool_set);

    WorkloadPool(WorkloadPool&& other) noexcept;
    WorkloadPool& operator=(WorkloadPool&& other) noexcept;
    ~WorkloadPool();

    // Transaction number `i`; the data written depends on `i`.
    Result<void> transaction(std::uint64_t i);
    // Transactions committed in the pool's lifetime (across opens).
    std::uint64_t committed() const noexcept;
    // The last slot written holds what transaction(committed() - 1) wrote.
    bool last_slot_intact() const noexcept;

private:
    struct Root;
    WorkloadPool(pmemobjpool* pool, Root* root) noexcept;
    static Result<WorkloadPool> adopt(pmemobjpool* pool, const std::filesystem::path& pool_set);
    void close() noexcept;

    pmemobjpool* pool_ = nullptr;
    Root* root_ = nullptr;
};

} // namespace rpmem::bench
