// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/error.h"
#include "protocol/frame_header.h"
#include "protocol/reply.h"
#include "protocol/request.h"

namespace rpmem::protocol {

// The one place that knows the byte layout of every message body; client and server compile
// the same code. Pure functions, no I/O, safe to call from any thread.
//
// Bodies are sequences of little-endian fields with no padding:
//   str       u16 length + that many bytes, no NUL inside, no terminator
//   attrs     104 bytes in the order of PMDK's struct rpmem_pool_attr: signature[8], major u32,
//             compat u32, incompat u32, ro_compat u32, poolset_uuid[16], uuid[16],
//             next_uuid[16], prev_uuid[16], user_flags[16]
//   status    u16 Status + str message
//   datapath  str provider, str host, u16 port, u64 remote_base, u64 remote_key,
//             u8 offset_addressing, u32 lanes, u8 persist_method, u32 inline_buffer_size,
//             u64 pool_size, token[32]
//
//   hello           u16 min_version, u16 max_version, u64 capabilities, str software
//   hello_reply     status, u16 version, u64 capabilities, str software, u64 session_id,
//                   u32 heartbeat_timeout_ms, str identity
//   create          str pool_set, u64 pool_size, u32 lanes, u8 provider, u8 persist_method,
//                   attrs
//   create_reply    status, datapath, u64 generation
//   open            str pool_set, u64 pool_size, u32 lanes, u8 provider, u8 persist_method,
//                   u64 expected_generation
//   open_reply      status, datapath, attrs, u8 state, u64 generation
//   close           u32 flags (bit 0: remove, bit 1: in_sync, bit 2: untouched; not 1 and 2)
//   set_attr        attrs
//   remove          str pool_set, u32 flags (bit 0: force, bit 1: remove the pool set file)
//   status          (empty)
//   status_reply    status, str software, u16 protocol_version, u64 uptime_seconds,
//                   u32 sessions, u32 pools_in_use, u16 count, count x str pool_set
//   ping, pong      (empty)
//   digest          u64 offset, u64 length, u32 extent_size
//   digest_reply    status, u32 count, count x u64 digest (XXH3-64, seed 0, one per extent)
//   close_reply, set_attr_reply, remove_reply, error_reply: status
//   promote         str pool_set, u32 flags (bit 0: force)
//   promote_reply   status, u8 previous_state, u64 previous_generation, u64 generation,
//                   u32 sessions_ended
//   demote          str pool_set, u64 generation (0: any)
//   demote_reply    status, u8 state, u64 generation
//   rejoin          str pool_set, u64 generation (not 0), poolset_uuid[16], primary_uuid[16]
//   rejoin_reply    status, replica_uuid[16], u8 state, u64 generation
//   attach_replica  str pool_set, replica_uuid[16] (zero: report only)
//   attach_replica_reply  status, poolset_uuid[16], primary_uuid[16], replica_uuid[16],
//                   u8 state, u64 generation, u8 flags (bit 0: promotable, bit 1: in_use)
//
// Decoding checks every field against the limits in message_limits.h, refuses unknown enum values,
// unknown flag bits and booleans other than 0/1, and requires the body to end exactly after
// the last field. Decode errors have errno EPROTO (EPROTONOSUPPORT for a version mismatch),
// source protocol, and the Status to answer with as native code.

// A whole frame (header and body). Fails with EINVAL when a field breaks a limit.
Result<std::vector<std::uint8_t>> encode(const Request& request, std::uint32_t request_id);
Result<std::vector<std::uint8_t>> encode(const Reply& reply, std::uint32_t request_id);

// The body of a frame whose header decode_frame_header() accepted. Fails unless the header's
// type is of the right direction and body.size() equals header.body_length.
Result<Request> decode_request(const FrameHeader& header, std::span<const std::uint8_t> body);
Result<Reply> decode_reply(const FrameHeader& header, std::span<const std::uint8_t> body);

// A whole frame in one buffer, header first; for tests and the fuzzer.
template <typename Message>
struct DecodedFrame {
    std::uint32_t request_id = 0;
    Message message;
};
Result<DecodedFrame<Request>> decode_request_frame(std::span<const std::uint8_t> frame);
Result<DecodedFrame<Reply>> decode_reply_frame(std::span<const std::uint8_t> frame);

} // namespace rpmem::protocol
