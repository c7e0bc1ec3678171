// SPDX-License-Identifier: BSD-3-Clause
#include "client/dirty_extents.h"

#include <algorithm>
#include <bit>

namespace rpmem::client {

DirtyExtents::DirtyExtents(std::size_t pool_size)
    : pool_size_(pool_size)
    , extents_((pool_size + kExtentSize - 1) / kExtentSize)
    , words_((extents_ + 63) / 64)
    , bits_(new std::atomic<std::uint64_t>[std::max<std::size_t>(words_, 1)]) {
    for (std::size_t i = 0; i < std::max<std::size_t>(words_, 1); ++i)
        bits_[i].store(0, std::memory_order_relaxed);
}

void DirtyExtents::mark(std::size_t offset, std::size_t length) noexcept {
    if (length == 0 || offset >= pool_size_)
        return;
    const std::size_t end = std::min(pool_size_, offset + std::min(length, pool_size_ - offset));
    std::size_t first = offset / kExtentSize;
    const std::size_t last = (end - 1) / kExtentSize;
    while (first <= last) {
        const std::size_t word = first / 64;
        const std::size_t bit = first % 64;
        const std::size_t span = std::min<std::size_t>(64 - bit, last - first + 1);
        const std::uint64_t mask = (span == 64 ? ~0ULL : ((1ULL << span) - 1)) << bit;
        bits_[word].fetch_or(mask, std::memory_order_release);
        first += span;
    }
}

bool DirtyExtents::take_bit(std::size_t extent) noexcept {
    const std::uint64_t mask = 1ULL << (extent % 64);
    return (bits_[extent / 64].fetch_and(~mask, std::memory_order_acquire) & mask) != 0;
}

std::optional<DirtyExtents::Extent> DirtyExtents::take_run(std::size_t from,
                                                           std::size_t max_extents) noexcept {
    if (words_ == 0)
        return std::nullopt;
    const std::size_t first = std::min(from / kExtentSize, extents_ - 1);
    const std::size_t start = first / 64;
    const std::uint64_t from_bit = first % 64;
    // The start word twice: its bits from `first` on first, its lower bits after the wrap.
    for (std::size_t n = 0; n <= words_; ++n) {
        const std::size_t word = (start + n) % words_;
        std::uint64_t allowed = ~0ULL;
        if (n == 0)
            allowed = ~0ULL << from_bit;
        else if (n == words_)
            allowed = from_bit == 0 ? 0 : ~0ULL >> (64 - from_bit);
        std::uint64_t value = bits_[word].load(std::memory_order_relaxed);
        while ((value & allowed) != 0) {
            const std::uint64_t candidates = value & allowed;
            const std::uint64_t lowest = candidates & (~candidates + 1);
            if (bits_[word].compare_exchange_weak(value, value & ~lowest, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
                const std::size_t extent =
                    word * 64 + static_cast<std::size_t>(std::countr_zero(lowest));
                std::size_t end = extent + 1;
                while (end - extent < max_extents && end < extents_ && take_bit(end))
                    ++end;
                const std::size_t offset = extent * kExtentSize;
                return Extent{offset, std::min(end * kExtentSize, pool_size_) - offset};
            }
        }
    }
    return std::nullopt;
}

std::size_t DirtyExtents::count() const noexcept {
    std::size_t dirty = 0;
    for (std::size_t i = 0; i < words_; ++i)
        dirty += static_cast<std::size_t>(std::popcount(bits_[i].load(std::memory_order_relaxed)));
    return dirty;
}

} // namespace rpmem::client
