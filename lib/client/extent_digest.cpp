// SPDX-License-Identifier: BSD-3-Clause
#include "client/extent_digest.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "protocol/extent_digest.h"
#include "protocol/request.h"

namespace rpmem::client {

Result<std::vector<std::uint64_t>> local_digests(std::span<const std::byte> pool,
                                                 std::size_t offset, std::size_t length,
                                                 std::size_t extent_size) {
    if (auto problem = protocol::check_digest_extent_size(extent_size))
        return fail(EINVAL, fmt::format("{}: {}", problem->field, problem->reason));
    if (offset > pool.size() || length > pool.size() - offset)
        return fail(EINVAL, fmt::format("length: [{}, +{}) is outside the pool of {} bytes", offset,
                                        length, pool.size()));
    return protocol::extent_digests(pool.subspan(offset, length), extent_size);
}

std::vector<Range> differing_ranges(std::span<const std::uint64_t> local,
                                    std::span<const std::uint64_t> remote, Range range,
                                    std::size_t extent_size) {
    std::vector<Range> ranges;
    if (extent_size == 0)
        return ranges;
    const std::size_t end = range.offset + range.length;
    std::size_t at = range.offset;
    for (std::size_t index = 0; at < end; ++index) {
        const std::size_t length = std::min(extent_size, end - at);
        bool same = index < local.size() && index < remote.size() && local[index] == remote[index];
        if (!same && !ranges.empty() && ranges.back().offset + ranges.back().length == at)
            ranges.back().length += length;
        else if (!same)
            ranges.push_back({at, length});
        at += length;
    }
    return ranges;
}

} // namespace rpmem::client
