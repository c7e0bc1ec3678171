// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "protocol/decoded.h"

namespace rpmem::protocol {

// The data-path messages a lane sends to the target (fi_sendmsg) and the target's replies,
// defined once for both halves. Fixed little-endian layouts with an explicit codec:
//
//   request (kLaneHeaderSize bytes, then `length` bytes of data for the inline operations)
//     0  u8  operation      4  u32 sequence     8  u64 offset     16 u64 length
//     1  u8  flags          24 u64 reserved (0)
//     2  u16 reserved (0)
//   flush_list data (a request's `length` bytes; its `offset` is 0): kLaneRangeSize bytes per range
//     0  u64 offset         8  u64 length
//   persist_records data (a request's `length` bytes; its `offset` is the initiator's queued
//   bytes behind this message when it sent it): records, each kLaneRecordHeaderSize bytes, then
//   its `length` bytes of pool data, then zeros up to a multiple of 8
//     0  u64 offset         8  u32 length     12 u8 flags (kRecordDeep)   13 u8[3] reserved (0)
//   reply (kLaneReplySize bytes)
//     0  u32 sequence       4  u32 status (0 or a positive errno)   8 u64 reserved (0)
//
// The header is 32 bytes so that inline data starts 8-byte aligned in the lane's buffers.
enum class LaneOperation : std::uint8_t {
    persist_inline = 1,      // data follows; the target copies it with 8-byte stores, flushes
    deep_persist_inline = 2, // as persist_inline, then flushes to the deepest domain
    flush = 3,               // [offset, +length) was RMA-written; the target flushes it
    deep_flush = 4,          // as flush, to the deepest domain
    barrier = 5,             // nothing to do: answering it acknowledges everything before it
    // Data follows: ranges that were RMA-written; the target flushes every one, so that a
    // batch of scattered writes (a resync's) costs one message. Only to a target that
    // announced Capability::flush_list.
    flush_list = 6,
    // Data follows: records of pool bytes, applied in order, each copied with 8-byte stores
    // and flushed before the next one is touched, so that the replica always equals a prefix
    // of the records sent on the lane (asynchronous replication, client/ordered_stream.h).
    // Only to a target that announced Capability::ordered_records.
    persist_records = 7,
};

inline constexpr std::uint8_t kAckRequested = 1; // the target replies once this is done

struct LaneRequest {
    LaneOperation operation = LaneOperation::barrier;
    std::uint8_t flags = 0;
    std::uint32_t sequence = 0;
    std::uint64_t offset = 0; // into the pool
    std::uint64_t length = 0;

    // Pool bytes follow the header, to be stored at `offset`.
    bool carries_data() const noexcept {
        return operation == LaneOperation::persist_inline ||
               operation == LaneOperation::deep_persist_inline;
    }
    // Anything follows the header: pool bytes or a flush_list's ranges.
    bool carries_payload() const noexcept {
        return carries_data() || operation == LaneOperation::flush_list ||
               operation == LaneOperation::persist_records;
    }
    bool wants_ack() const noexcept { return (flags & kAckRequested) != 0; }
};

struct LaneReply {
    std::uint32_t sequence = 0;
    std::uint32_t status = 0; // 0: done; else the errno the target met
};

inline constexpr std::size_t kLaneHeaderSize = 32;
inline constexpr std::size_t kLaneReplySize = 16;
inline constexpr std::size_t kLaneRangeSize = 16;

// One range of a flush_list.
struct LaneRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

inline constexpr std::size_t kLaneRecordHeaderSize = 16;
inline constexpr std::uint8_t kRecordDeep = 1; // flushed to the deepest domain

// One record of a persist_records message: where its bytes go.
struct LaneRecord {
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    std::uint8_t flags = 0;
};

// The bytes a record of `length` bytes of data takes in a message.
constexpr std::size_t lane_record_size(std::size_t length) noexcept {
    return kLaneRecordHeaderSize + (length + 7) / 8 * 8;
}

// The shape of a lane's traffic, shared by both halves.
// Messages a lane may have sent but not yet seen acknowledged: the target keeps this many
// receive buffers posted per lane, so the initiator never sends into a missing one.
inline constexpr std::size_t kLaneCredits = 4;
// Inline data a message may carry (the target tells the initiator its value in the create or
// open reply; this is what rpmemd offers). 64 KiB keeps 4 KiB persists to one message and
// large strict persists to few messages, at 4 x 64 KiB of receive buffers per lane.
inline constexpr std::size_t kDefaultInlineSize = 64 * 1024;

// A receive buffer: header plus inline data.
constexpr std::size_t lane_slot_size(std::size_t inline_size) noexcept {
    return kLaneHeaderSize + inline_size;
}

// Writes the header into `out` (at least kLaneHeaderSize bytes; kLaneReplySize for a reply).
void encode(const LaneRequest& request, std::span<std::byte> out) noexcept;
void encode(const LaneReply& reply, std::span<std::byte> out) noexcept;
// Writes `ranges` as a flush_list's data into `out` (kLaneRangeSize bytes each).
void encode(std::span<const LaneRange> ranges, std::span<std::byte> out) noexcept;
// Writes one record with `data` (record.length bytes) into `out`
// (lane_record_size(record.length) bytes), padding included.
void encode(const LaneRecord& record, std::span<const std::byte> data,
            std::span<std::byte> out) noexcept;

// What the receiving lane allows: `pool_size` bounds the range, `inline_limit` the inline data,
// and no range may reach below `protected_prefix` (the pool header, which the target does not
// even map where a worker serves the lane): neither written nor flushed.
struct LaneLimits {
    std::uint64_t pool_size = 0;
    std::uint64_t inline_limit = 0;
    std::uint64_t protected_prefix = 0;
};

// Validates a received request (everything received: header and data), in order: size,
// operation, flags, reserved fields, data length, range. This is the target's one range check.
// Errors are EPROTO (malformed) or EINVAL (out of range), with a message naming the field; the
// id is the message's sequence number whenever its header was complete.
Decoded<LaneRequest> decode_lane_request(std::span<const std::byte> message,
                                         const LaneLimits& limits);

// How many ranges a flush_list carries, and range `index` of one (`message` as received, after
// decode_lane_request accepted it: every range is then checked like a flush's).
constexpr std::size_t flush_list_size(const LaneRequest& request) noexcept {
    return static_cast<std::size_t>(request.length / kLaneRangeSize);
}
LaneRange flush_list_range(std::span<const std::byte> message, std::size_t index) noexcept;

// The record at byte `at` of a persist_records message's data (`message` as received, after
// decode_lane_request accepted it: every record is then whole, padded and inside the pool);
// `at` 0 is the first, and the next one is at `at + lane_record_size(record.length)`.
LaneRecord lane_record_at(std::span<const std::byte> message, std::size_t at) noexcept;
// A record's data, as lane_record_at found it at `at`.
std::span<const std::byte> lane_record_data(std::span<const std::byte> message, std::size_t at,
                                            const LaneRecord& record) noexcept;

Result<LaneReply> decode_lane_reply(std::span<const std::byte> message);

} // namespace rpmem::protocol
