// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace rpmem::client {

// The fan-out's claim on one lane of a replica (client/sibling_group.h): a persist that a
// sibling's call posted ahead on this lane, with the range, the connection it went on and the
// bytes it carried. The replica's own call of the same persist may stand on it, and only wait
// for its acknowledgement, when the range still holds exactly those bytes and the lane still
// has that connection; otherwise the call persists anew. Why that never acknowledges early is
// said in client/replica.h. Not thread-safe: the lane's mutex guards it.
class PostedAhead {
public:
    // Before a sibling posts a range: keeps the bytes the pool holds there now (the message
    // copies them right after). Any earlier record is dropped.
    void begin(std::span<const std::byte> pool_range);
    // After the post at `offset` on the connection `on`: recorded only when the pool still holds
    // the kept bytes (a racing writer may have changed them: then the own call sends anew).
    void posted(const void* on, std::size_t offset, std::span<const std::byte> pool_range_now);
    // Whether the posted persist stands for a persist of `pool_range` at `offset` on the
    // connection `on`; spent either way.
    bool claim(const void* on, std::size_t offset, std::span<const std::byte> pool_range);
    // The connection the posted persist went on is gone.
    void forget() noexcept { valid_ = false; }

private:
    bool valid_ = false;
    const void* on_ = nullptr;
    std::size_t offset_ = 0;
    std::vector<std::byte> bytes_;
};

} // namespace rpmem::client
