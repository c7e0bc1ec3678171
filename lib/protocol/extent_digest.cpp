// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/extent_digest.h"

#include <algorithm>

#include <xxhash.h>

namespace rpmem::protocol {

std::uint64_t extent_digest(std::span<const std::byte> extent) noexcept {
    return XXH3_64bits(extent.data(), extent.size());
}

std::vector<std::uint64_t> extent_digests(std::span<const std::byte> bytes,
                                          std::size_t extent_size) {
    std::vector<std::uint64_t> digests;
    if (extent_size == 0)
        return digests;
    digests.reserve(bytes.size() / extent_size + 1);
    for (std::size_t at = 0; at < bytes.size(); at += extent_size)
        digests.push_back(
            extent_digest(bytes.subspan(at, std::min(extent_size, bytes.size() - at))));
    return digests;
}

} // namespace rpmem::protocol
