// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace rpmem::client {

// The extents of a pool a degraded replica missed: one bit per kExtentSize bytes, in memory.
// 4 KiB, as DRBD's bitmap: the page is the smallest unit libpmemobj's persists cluster in, so a
// resync sends little more than was written, and the map costs 1/32768 of the pool (32 KiB for
// 1 GiB). Thread-safe without locks: persists on any lane mark, one resync thread takes.
// A mark made before take() cleared the bit is seen by whoever reads the pool after take()
// (release on mark, acquire on take), which is what makes a resync copy read data at least as
// new as every persist that marked it.
class DirtyExtents {
public:
    static constexpr std::size_t kExtentSize = 4096;

    explicit DirtyExtents(std::size_t pool_size);

    // Marks every extent that [offset, offset + length) touches.
    void mark(std::size_t offset, std::size_t length) noexcept;

    // Clears and returns the first dirty extent at or after `from` (a byte offset), wrapping
    // around once; nothing when no extent is dirty.
    struct Extent {
        std::size_t offset;
        std::size_t length; // kExtentSize, less for the pool's last extent
    };
    std::optional<Extent> take(std::size_t from) noexcept { return take_run(from, 1); }
    // As take(), and the dirty extents right after it too, `max_extents` in all at most (a run
    // never wraps past the pool's end).
    std::optional<Extent> take_run(std::size_t from, std::size_t max_extents) noexcept;

    // Dirty extents now (a snapshot while others mark).
    std::size_t count() const noexcept;
    bool empty() const noexcept { return count() == 0; }
    std::size_t pool_size() const noexcept { return pool_size_; }

private:
    // Clears the bit of `extent` if set; true when it was.
    bool take_bit(std::size_t extent) noexcept;

    std::size_t pool_size_;
    std::size_t extents_;
    std::size_t words_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> bits_;
};

} // namespace rpmem::client
