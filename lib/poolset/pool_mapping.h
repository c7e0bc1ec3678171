// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/unique_fd.h"
#include "poolset/mapped_range.h"
#include "poolset/pool_header.h"
#include "poolset/pool_set.h"

namespace rpmem::poolset {

// The part files of one local replica of a pool set, open, locked and mapped as one contiguous
// range the way PMDK maps a replica: part 0 from its file offset 0 (its header, if any, is the
// pool's first page), every later part right after the previous one, without its header page
// unless the set has SINGLEHDR or NOHDRS. Header pages are also mapped on their own for
// read_headers/write_headers. Owns the descriptors (each holding flock(LOCK_EX)) and the
// mappings; moving is allowed, copying not. Not thread-safe: rpmemd's session that owns it
// serialises its use (persist may be called from any thread once the range is set up, as it
// only flushes).
class PoolMapping {
public:
    // Creates (or takes over, if present with the declared size and an all-zero first 4 KiB)
    // the part files of `set`'s replica `replica` with mode 0600, locks and maps them. A part
    // holding data gives EEXIST, a locked part EBUSY, a size mismatch EINVAL; AUTO parts must
    // be device DAX. On failure nothing created is left behind.
    static Result<PoolMapping> create(const PoolSet& set, std::size_t replica = 0);

    // Opens, locks and maps the existing part files (ENOENT, EBUSY, EINVAL as above).
    static Result<PoolMapping> open(const PoolSet& set, std::size_t replica = 0);

    // Unlinks the part files of every local replica of `set`, each after taking its lock (a
    // locked part gives EBUSY, a missing one ENOENT). With `force`, per-part errors are
    // ignored. Sets with remote replicas are refused (EINVAL).
    static Result<void> remove(const PoolSet& set, bool force);

    PoolMapping(PoolMapping&&) noexcept = default;
    PoolMapping& operator=(PoolMapping&&) noexcept = default;
    PoolMapping(const PoolMapping&) = delete;
    PoolMapping& operator=(const PoolMapping&) = delete;
    ~PoolMapping() = default;

    std::uint8_t* data() const noexcept { return range_.data(); }
    std::uint64_t size() const noexcept { return range_.size(); }
    // Whether the range is persistent memory (device DAX, or libpmem's pmem_is_pmem, which
    // PMEM_IS_PMEM_FORCE overrides): decides between CPU flushes and msync.
    bool is_pmem() const noexcept { return is_pmem_; }
    // The set with AUTO part sizes replaced by the device sizes found.
    const PoolSet& set() const noexcept { return set_; }
    // Each part file's ctime (seconds), as PMDK writes into pool headers.
    const std::vector<std::uint64_t>& creation_times() const noexcept { return ctimes_; }
    // Whether this object created the part files (create() on absent files).
    const std::vector<bool>& created_parts() const noexcept { return created_; }

    // Where each piece of the contiguous range comes from: `length` bytes of part `part`'s
    // descriptor from `file_offset`, at `pool_offset` of the range. Another process given the
    // descriptors can map the same pool (rpmemd's data-path workers do).
    struct Segment {
        std::size_t part = 0;
        std::uint64_t file_offset = 0;
        std::uint64_t length = 0;
        std::uint64_t pool_offset = 0;
    };
    const std::vector<Segment>& segments() const noexcept { return segments_; }
    // The descriptor of part `part` (open read-write; owned by this mapping).
    int part_fd(std::size_t part) const noexcept { return fds_[part].get(); }

    // Makes [offset, offset + length) of the pool durable: pmem_persist on persistent memory,
    // else msync. EINVAL when the range exceeds the pool.
    Result<void> persist(std::uint64_t offset, std::uint64_t length) const;
    // Flushes to the deepest domain (libpmem's pmem_deep_persist: device DAX deep flush, or
    // msync).
    Result<void> deep_persist(std::uint64_t offset, std::uint64_t length) const;
    // Tells the kernel that [offset, offset + length) is about to be read once, start to end
    // (madvise MADV_WILLNEED, clipped to the pool): its pages then come in large batches rather
    // than one fault at a time. Only a hint: nothing fails.
    void will_read(std::uint64_t offset, std::uint64_t length) const noexcept;

    // The headers of the parts that carry one (none with NOHDRS).
    std::vector<PoolHeader> read_headers() const;
    // Writes those headers and makes them durable. EINVAL for a wrong count.
    Result<void> write_headers(std::span<const PoolHeader> headers);

private:
    PoolMapping() = default;
    static Result<PoolMapping> map(const PoolSet& set, std::size_t replica, bool create);
    Result<void> flush(std::uint8_t* address, std::size_t length, bool is_header) const;

    PoolSet set_;
    std::vector<UniqueFd> fds_; // parent of the mappings: declared first, destroyed last
    std::vector<std::uint64_t> ctimes_;
    std::vector<bool> created_;
    MappedRange range_;
    std::vector<Segment> segments_;
    std::vector<MappedRange> header_maps_;
    bool is_pmem_ = false;
};

} // namespace rpmem::poolset
