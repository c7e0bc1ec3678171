// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/worker/segment_pool.h"

#include <cerrno>

#include <fmt/format.h>
#include <libpmem.h>
#include <sys/mman.h>

namespace rpmem::daemon {

Result<std::unique_ptr<SegmentPool>> SegmentPool::map(const protocol::WorkerStart& start,
                                                      std::vector<UniqueFd> fds) {
    if (start.pool_size == 0 || start.data_offset >= start.pool_size)
        return fail(EINVAL, fmt::format("a pool of {} bytes with data from offset {}",
                                        start.pool_size, start.data_offset));
    std::unique_ptr<SegmentPool> pool(new SegmentPool());
    pool->data_offset_ = start.data_offset;
    pool->is_pmem_ = start.is_pmem;
    void* reserved = ::mmap(nullptr, start.pool_size, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED)
        return fail(Error::from_errno(
            errno, fmt::format("reserving {} bytes for the pool", start.pool_size)));
    pool->range_ = poolset::MappedRange(reserved, start.pool_size);

    std::uint64_t mapped = 0;
    for (const protocol::WorkerSegment& segment : start.segments) {
        if (segment.fd_index >= fds.size())
            return fail(EINVAL, fmt::format("segment names descriptor {} of {}", segment.fd_index,
                                            fds.size()));
        // Leave out whatever of the segment lies in the header.
        std::uint64_t skip = segment.pool_offset < start.data_offset
                                 ? std::min(segment.length, start.data_offset - segment.pool_offset)
                                 : 0;
        if (skip == segment.length)
            continue;
        void* want = pool->range_.data() + segment.pool_offset + skip;
        void* got =
            ::mmap(want, segment.length - skip, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   fds[segment.fd_index].get(), static_cast<off_t>(segment.file_offset + skip));
        if (got == MAP_FAILED)
            return fail(Error::from_errno(
                errno, fmt::format("mapping {} bytes of part descriptor {} at pool offset {} "
                                   "(file offset {})",
                                   segment.length - skip, segment.fd_index,
                                   segment.pool_offset + skip, segment.file_offset + skip)));
        mapped += segment.length;
    }
    if (mapped != start.pool_size)
        return fail(EINVAL, fmt::format("the segments cover {} of the pool's {} bytes", mapped,
                                        start.pool_size));
    // The descriptors close here: the mappings keep the files, and a worker that holds no part
    // descriptor has none to map or write a header through, should an exploit drive it.
    return pool;
}

// Ranges come checked against the pool's data by decode_lane_request (the target's one range
// check): never below data_offset_, which is not even mapped here.
Result<void> SegmentPool::persist(std::uint64_t offset, std::uint64_t length) const {
    if (length == 0)
        return {};
    std::uint8_t* address = range_.data() + offset;
    if (is_pmem_) {
        ::pmem_persist(address, length);
        return {};
    }
    if (::pmem_msync(address, length) != 0)
        return fail(Error::from_errno(errno, "msync of the pool"));
    return {};
}

Result<void> SegmentPool::deep_persist(std::uint64_t offset, std::uint64_t length) const {
    if (length == 0)
        return {};
    if (::pmem_deep_persist(range_.data() + offset, length) != 0)
        return fail(Error::from_errno(errno, "deep persist of the pool"));
    return {};
}

} // namespace rpmem::daemon
