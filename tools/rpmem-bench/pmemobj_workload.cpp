// SPDX-License-Identifier: BSD-3-Clause
#include "pmemobj_workload.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <libpmemobj.h>

namespace rpmem::bench {

namespace {

constexpr const char* kLayout = "rpmem-bench";
constexpr std::size_t kSlotSize = 64;
constexpr std::size_t kSlots = 64;

Error pmemobj_error(std::string_view step, const std::filesystem::path& where) {
    const int error = errno != 0 ? errno : EIO;
    return Error(error, fmt::format("{} {}: {}", step, where.string(), pmemobj_errormsg()));
}

// Busy work for `gap`: the CPU stays with this thread, as a program's computation would.
void busy_for(std::chrono::nanoseconds gap) noexcept {
    if (gap <= std::chrono::nanoseconds::zero())
        return;
    const auto end = std::chrono::steady_clock::now() + gap;
    while (std::chrono::steady_clock::now() < end) {
    }
}

void fill(std::byte* slot, std::uint64_t i) noexcept {
    for (std::size_t b = 0; b < kSlotSize; ++b)
        slot[b] = static_cast<std::byte>((i * 31 + b) & 0xff);
}

} // namespace

struct WorkloadPool::Root {
    std::uint64_t committed;
    std::byte slots[kSlots][kSlotSize];
};

WorkloadPool::WorkloadPool(pmemobjpool* pool, Root* root) noexcept
    : pool_(pool)
    , root_(root) {}

WorkloadPool::WorkloadPool(WorkloadPool&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr))
    , root_(std::exchange(other.root_, nullptr)) {}

WorkloadPool& WorkloadPool::operator=(WorkloadPool&& other) noexcept {
    if (this != &other) {
        close();
        pool_ = std::exchange(other.pool_, nullptr);
        root_ = std::exchange(other.root_, nullptr);
    }
    return *this;
}

WorkloadPool::~WorkloadPool() {
    close();
}

void WorkloadPool::close() noexcept {
    if (pool_ != nullptr)
        pmemobj_close(std::exchange(pool_, nullptr));
}

// Owns `pool` from here on, and finds (or allocates) its root object.
Result<WorkloadPool> WorkloadPool::adopt(pmemobjpool* pool, const std::filesystem::path& pool_set) {
    WorkloadPool owner(pool, nullptr);
    const std::size_t existing = pmemobj_root_size(pool);
    if (existing != 0 && existing < sizeof(Root))
        return fail(EINVAL, fmt::format("{}: not a pool of this workload", pool_set.string()));
    owner.root_ = static_cast<Root*>(pmemobj_direct(pmemobj_root(pool, sizeof(Root))));
    if (owner.root_ == nullptr)
        return fail(pmemobj_error("allocating the root object of", pool_set));
    return owner;
}

Result<WorkloadPool> WorkloadPool::create(const std::filesystem::path& pool_set) {
    errno = 0;
    // Size 0: the pool set file gives the sizes.
    PMEMobjpool* pool = pmemobj_create(pool_set.c_str(), kLayout, 0, 0600);
    if (pool == nullptr)
        return fail(pmemobj_error("pmemobj_create", pool_set));
    return adopt(pool, pool_set);
}

Result<WorkloadPool> WorkloadPool::open(const std::filesystem::path& pool_set) {
    errno = 0;
    PMEMobjpool* pool = pmemobj_open(pool_set.c_str(), kLayout);
    if (pool == nullptr)
        return fail(pmemobj_error("pmemobj_open", pool_set));
    return adopt(pool, pool_set);
}

Result<void> WorkloadPool::transaction(std::uint64_t i, const TransactionShape& shape) {
    const unsigned objects = std::max(1u, std::min<unsigned>(shape.objects, kSlots));
    // No jmp_buf: a failed step aborts the transaction and returns its errno instead.
    if (pmemobj_tx_begin(pool_, nullptr, TX_PARAM_NONE) != 0)
        return fail(errno, fmt::format("pmemobj_tx_begin: {}", pmemobj_errormsg()));
    int failed = 0;
    // The last slot written is transaction i's first: last_slot_intact() checks it.
    for (unsigned k = objects; k-- > 0 && failed == 0;) {
        std::byte* slot = root_->slots[(i + k) % kSlots];
        busy_for(shape.gap);
        failed = pmemobj_tx_add_range_direct(slot, kSlotSize);
        if (failed == 0)
            fill(slot, i + k);
    }
    if (failed == 0)
        failed = pmemobj_tx_add_range_direct(&root_->committed, sizeof root_->committed);
    if (failed == 0) {
        root_->committed += 1;
        busy_for(shape.gap);
        pmemobj_tx_commit();
    }
    const int ended = pmemobj_tx_end();
    if (failed != 0 || ended != 0)
        return fail(failed != 0 ? failed : ended,
                    fmt::format("transaction {}: {}", i, pmemobj_errormsg()));
    return {};
}

std::uint64_t WorkloadPool::committed() const noexcept {
    return root_->committed;
}

bool WorkloadPool::last_slot_intact() const noexcept {
    const std::uint64_t count = committed();
    if (count == 0)
        return true;
    std::byte expected[kSlotSize];
    fill(expected, count - 1);
    return std::memcmp(root_->slots[(count - 1) % kSlots], expected, kSlotSize) == 0;
}

} // namespace rpmem::bench
