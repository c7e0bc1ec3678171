// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/error.h"

namespace rpmem::client {

// The initiator's half of comparing a pool with a remote replica: digests of the local pool
// computed exactly as the target computes them for a DigestRequest (protocol::extent_digests),
// and the ranges where two digest vectors disagree. Pure functions, no I/O.

// A byte range of a pool.
struct Range {
    std::size_t offset = 0;
    std::size_t length = 0;

    friend bool operator==(const Range&, const Range&) = default;
};

// The digests of [offset, offset + length) of `pool`, one per extent of `extent_size` bytes
// (a power of two from 4 KiB to 64 MiB), the last extent possibly short. EINVAL naming the
// field for a bad extent size or a range outside `pool`.
Result<std::vector<std::uint64_t>> local_digests(std::span<const std::byte> pool,
                                                 std::size_t offset, std::size_t length,
                                                 std::size_t extent_size);

// The ranges of `range` whose extents' digests differ between `local` and `remote`, both the
// digests of `range` in extents of `extent_size` bytes; neighbouring differing extents merge
// into one range, and no range reaches past the end of `range`. An extent that one vector
// lacks (a short vector) counts as differing.
std::vector<Range> differing_ranges(std::span<const std::uint64_t> local,
                                    std::span<const std::uint64_t> remote, Range range,
                                    std::size_t extent_size);

} // namespace rpmem::client
