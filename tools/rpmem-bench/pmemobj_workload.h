// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>

#include "base/error.h"

struct pmemobjpool;

namespace rpmem::bench {

// What a transaction does besides its persists. The default is the smallest real update: one
// object and the counter, no work between. A real program computes, logs and allocates between
// the persists of a transaction: `objects` slots each snapshotted (pmemobj_tx_add_range, one
// undo-log persist each) and rewritten, with `gap` of busy work (the CPU computing, not asleep)
// before each snapshot and before the commit.
struct TransactionShape {
    unsigned objects = 1;
    std::chrono::nanoseconds gap{0};
};

// A libpmemobj pool running the small-transaction workload: each transaction snapshots
// `shape.objects` 64-byte slots of the root object and its commit counter, rewrites them and
// commits, the shape of a typical small update. Unaware of rpmem: whether it replicates is up to
// the pool set file, exactly as for any libpmemobj application. Closed when the object goes.
class WorkloadPool {
public:
    static Result<WorkloadPool> create(const std::filesystem::path& pool_set);
    static Result<WorkloadPool> open(const std::filesystem::path& pool_set);

    WorkloadPool(WorkloadPool&& other) noexcept;
    WorkloadPool& operator=(WorkloadPool&& other) noexcept;
    ~WorkloadPool();

    // Transaction number `i`; the data written depends on `i`.
    Result<void> transaction(std::uint64_t i, const TransactionShape& shape = {});
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
