// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"

namespace rpmem::persist {

// The data-path messages a lane sends to the target (over fi_send) and the target's replies,
// defined once for both halves. Fixed little-endian layouts with an explicit codec:
//
//   request (kHeaderSize bytes, then `length` bytes of data for the inline operations)
//     0  u8  operation      4  u32 sequence     8  u64 offset     16 u64 length
//     1  u8  flags          24 u64 reserved (0)
//     2  u16 reserved (0)
//   reply (kReplySize bytes)
//     0  u32 sequence       4  u32 status (0 or a positive errno)   8 u64 reserved (0)
//
// The header is 32 bytes so that inline data starts 8-byte aligned in the lane's buffers.
enum class Operation : std::uint8_t {
    persist_inline = 1,      // data follows; the target copies it with 8-byte stores, flushes
    deep_persist_inline = 2, // as persist_inline, then flushes to the deepest domain
    flush = 3,               // [offset, +length) was RMA-written; the target flushes it
    deep_flush = 4,          // as flush, to the deepest domain
    barrier = 5,             // nothing to do: answering it acknowledges everything before it
};

inline constexpr std::uint8_t kAckRequested = 1; // the target replies once this is done

struct Request {
    Operation operation = Operation::barrier;
    std::uint8_t flags = 0;
    std::uint32_t sequence = 0;
    std::uint64_t offset = 0; // into the pool
    std::uint64_t length = 0;

    bool carries_data() const noexcept {
        return operation == Operation::persist_inline ||
               operation == Operation::deep_persist_inline;
    }
    bool wants_ack() const noexcept { return (flags & kAckRequested) != 0; }
};

struct Reply {
    std::uint32_t sequence = 0;
    std::uint32_t status = 0; // 0: done; else the errno the target met
};

inline constexpr std::size_t kHeaderSize = 32;
inline constexpr std::size_t kReplySize = 16;

// Writes the header into `out` (at least kHeaderSize bytes).
void encode(const Request& request, std::span<std::byte> out) noexcept;
void encode(const Reply& reply, std::span<std::byte> out) noexcept;

// Validates a received request against what this lane may do, in order: size, operation, flags,
// reserved fields, data length, range. `message` is everything received (header and data);
// `pool_size` bounds the range; `inline_limit` bounds inline data; offsets below
// `protected_prefix` (the pool header) may not be written. Errors are EPROTO (malformed) or
// EINVAL (out of range), with a message naming the field.
Result<Request> decode_request(std::span<const std::byte> message, std::uint64_t pool_size,
                               std::uint64_t inline_limit, std::uint64_t protected_prefix);

Result<Reply> decode_reply(std::span<const std::byte> message);

} // namespace rpmem::persist
