// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "protocol/decoded.h"
#include "protocol/message_type.h"

namespace rpmem::protocol {

// Every message travels as one frame: a fixed 16-byte header followed by the body.
//
//   offset  size  field
//        0     4  magic        "RPMC" (0x52 0x50 0x4d 0x43)
//        4     2  version      protocol version of this frame's body
//        6     2  type         MessageType
//        8     4  request_id   chosen by the client, echoed in the reply
//       12     4  body_length  bytes following the header
//
// All integers are little-endian. request_id lets heartbeats and requests share the channel:
// a reply carries the id of the request it answers.
inline constexpr std::size_t kFrameHeaderSize = 16;
inline constexpr std::array<std::uint8_t, 4> kFrameMagic{0x52, 0x50, 0x4d, 0x43};

struct FrameHeader {
    std::uint16_t version = 0;
    MessageType type = MessageType::hello;
    std::uint32_t request_id = 0;
    std::uint32_t body_length = 0;

    friend bool operator==(const FrameHeader&, const FrameHeader&) = default;
};

using FrameHeaderBytes = std::array<std::uint8_t, kFrameHeaderSize>;

FrameHeaderBytes encode_frame_header(const FrameHeader& header) noexcept;

// Validates, in this order, the magic, the version (any version is accepted for hello and
// hello_reply, whose layout is frozen), the type and the body length against the type's limit.
// The error's native code is the Status a server answers with (protocol_mismatch or
// bad_message); its errno is EPROTONOSUPPORT or EPROTO. The id is the request id, also of a
// refused header, so that even that refusal can be answered by id.
Decoded<FrameHeader> decode_frame_header(std::span<const std::uint8_t, kFrameHeaderSize> bytes);

} // namespace rpmem::protocol
