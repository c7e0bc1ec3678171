// SPDX-License-Identifier: BSD-3-Clause
#include "client/posted_ahead.h"

#include <algorithm>

namespace rpmem::client {

void PostedAhead::begin(std::span<const std::byte> pool_range) {
    valid_ = false;
    bytes_.assign(pool_range.begin(), pool_range.end());
}

void PostedAhead::posted(const void* on, std::size_t offset,
                         std::span<const std::byte> pool_range_now) {
    // A message whose bytes no one can vouch for is never claimed.
    if (bytes_.size() != pool_range_now.size() ||
        !std::equal(bytes_.begin(), bytes_.end(), pool_range_now.begin()))
        return;
    on_ = on;
    offset_ = offset;
    valid_ = true;
}

bool PostedAhead::claim(const void* on, std::size_t offset, std::span<const std::byte> pool_range) {
    if (!valid_)
        return false;
    valid_ = false;
    return on_ == on && offset_ == offset && bytes_.size() == pool_range.size() &&
           std::equal(bytes_.begin(), bytes_.end(), pool_range.begin());
}

} // namespace rpmem::client
