// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <shared_mutex>

namespace rpmem::client {

// Orders a resync copy against the persists of the same range while a replica catches up:
// a persist holds the stripes of its range shared from before it reads the pool until its
// acknowledgement; a resync copy holds its extent's stripe exclusively from before it reads
// the pool until its acknowledgement. So of a persist and a copy that meet, whichever lands
// last read the pool last, and both read it after the application's store (which precedes
// the persist call): no copy overwrites newer data on the target. Extents map onto 64
// stripes; a thread takes its stripes in ascending order, so there is no deadlock.
class ExtentLocks {
public:
    static constexpr std::size_t kStripes = 64;

    // The stripes covering [offset, offset + length) with extents of `extent_size` bytes.
    static std::uint64_t stripes_of(std::size_t offset, std::size_t length,
                                    std::size_t extent_size) noexcept {
        if (length == 0)
            return 0;
        const std::size_t first = offset / extent_size;
        const std::size_t last = (offset + length - 1) / extent_size;
        if (last - first + 1 >= kStripes)
            return ~0ULL;
        std::uint64_t mask = 0;
        for (std::size_t e = first; e <= last; ++e)
            mask |= 1ULL << (e % kStripes);
        return mask;
    }

    // Holds `stripes` shared (a persist) or exclusive (a resync copy) for its lifetime.
    class Hold {
    public:
        Hold(ExtentLocks& locks, std::uint64_t stripes, bool exclusive)
            : locks_(locks)
            , stripes_(stripes)
            , exclusive_(exclusive) {
            for (std::size_t i = 0; i < kStripes; ++i)
                if ((stripes_ >> i) & 1)
                    exclusive_ ? locks_.stripes_[i].lock() : locks_.stripes_[i].lock_shared();
        }
        ~Hold() {
            for (std::size_t i = kStripes; i-- > 0;)
                if ((stripes_ >> i) & 1)
                    exclusive_ ? locks_.stripes_[i].unlock() : locks_.stripes_[i].unlock_shared();
        }
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;

    private:
        ExtentLocks& locks_;
        std::uint64_t stripes_;
        bool exclusive_;
    };

private:
    std::array<std::shared_mutex, kStripes> stripes_;
};

} // namespace rpmem::client
