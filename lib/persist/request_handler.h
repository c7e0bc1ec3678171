// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "base/error.h"
#include "protocol/lane_message.h"

namespace rpmem::persist {

// The target's pool as the persist messages see it: the mapped bytes and how to make a range
// durable there. Implemented by rpmemd over its PoolMapping.
class TargetPool {
public:
    virtual ~TargetPool() = default;
    virtual std::span<std::byte> bytes() const noexcept = 0;
    // pmem_persist on persistent memory, msync otherwise. Ranges come checked: inside the pool
    // and above its protected prefix (decode_lane_request is the target's one range check).
    virtual Result<void> persist(std::uint64_t offset, std::uint64_t length) const = 0;
    // To the deepest domain (msync off device DAX).
    virtual Result<void> deep_persist(std::uint64_t offset, std::uint64_t length) const = 0;
};

// The target half of the persist messages for one lane: validates a received message, copies
// inline data with 8-byte stores, flushes, and says what to answer. Pure logic over a
// TargetPool; the fabric loop around it only moves bytes. One per lane; not thread-safe.
class RequestHandler {
public:
    // `inline_limit`: the largest inline data a message may carry (the lane's buffer size
    // minus the header); `protected_prefix`: pool bytes inline persists may not write.
    RequestHandler(const TargetPool& pool, std::uint64_t inline_limit,
                   std::uint64_t protected_prefix) noexcept
        : pool_(pool)
        , limits_{pool.bytes().size(), inline_limit, protected_prefix} {}

    // What to do after a message.
    struct Outcome {
        std::optional<protocol::LaneReply> reply; // to send (acknowledgements and failures)
        bool close_lane = false;           // the message was malformed: the lane cannot be trusted
        std::uint64_t persisted_bytes = 0; // a persist or flush made this many bytes durable
        // A persist_records message: the bytes the initiator had queued behind it.
        std::optional<std::uint64_t> initiator_lag;
    };

    // Handles one received message (header and data, exactly the bytes received). A failed
    // flush is answered with its errno; a malformed message with EPROTO (or EINVAL for a range
    // outside the pool) and close_lane, as nothing later on that lane can be trusted.
    Outcome handle(std::span<const std::byte> message) noexcept;

private:
    // Applies a persist_records message's records; `applied` grows by their data's bytes.
    Result<void> apply_records(std::span<const std::byte> message, std::uint64_t length,
                               std::uint64_t& applied) const noexcept;

    const TargetPool& pool_;
    protocol::LaneLimits limits_;
};

} // namespace rpmem::persist
