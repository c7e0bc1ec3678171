// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/frame_header.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "base/little_endian.h"
#include "protocol/message_limits.h"
#include "protocol/status.h"
#include "protocol/version.h"

namespace rpmem::protocol {

namespace {

tl::unexpected<Error> frame_error(Status status, std::string message) {
    return fail(errno_of(status), std::move(message), ErrorSource::protocol,
                static_cast<int>(status));
}

} // namespace

FrameHeaderBytes encode_frame_header(const FrameHeader& header) noexcept {
    FrameHeaderBytes bytes{};
    std::copy(kFrameMagic.begin(), kFrameMagic.end(), bytes.begin());
    store_le(&bytes[4], header.version);
    store_le(&bytes[6], static_cast<std::uint16_t>(header.type));
    store_le(&bytes[8], header.request_id);
    store_le(&bytes[12], header.body_length);
    return bytes;
}

namespace {

Result<FrameHeader> validate(std::span<const std::uint8_t, kFrameHeaderSize> bytes) {
    if (!std::equal(kFrameMagic.begin(), kFrameMagic.end(), bytes.begin()))
        return frame_error(Status::bad_message,
                           fmt::format("frame header: bad magic {:02x} {:02x} {:02x} {:02x}",
                                       bytes[0], bytes[1], bytes[2], bytes[3]));

    FrameHeader header;
    header.version = load_le<std::uint16_t>(&bytes[4]);
    auto raw_type = load_le<std::uint16_t>(&bytes[6]);
    header.request_id = load_le<std::uint32_t>(&bytes[8]);
    header.body_length = load_le<std::uint32_t>(&bytes[12]);

    // Hello and HelloReply have one layout in every version; that is how peers of different
    // versions learn about each other. Every other frame must be in the version we speak.
    bool frozen_layout = raw_type == static_cast<std::uint16_t>(MessageType::hello) ||
                         raw_type == static_cast<std::uint16_t>(MessageType::hello_reply);
    if (header.version != kProtocolVersion && !frozen_layout)
        return frame_error(Status::protocol_mismatch,
                           fmt::format("frame header: protocol version {} not supported (this "
                                       "end speaks version {})",
                                       header.version, kProtocolVersion));

    auto type = message_type_from_wire(raw_type);
    if (!type)
        return frame_error(Status::bad_message,
                           fmt::format("frame header: unknown message type {}", raw_type));
    header.type = *type;

    if (header.body_length > max_body_length(header.type))
        return frame_error(Status::bad_message,
                           fmt::format("frame header: {} body of {} bytes exceeds the limit of {}",
                                       name_of(header.type), header.body_length,
                                       max_body_length(header.type)));
    return header;
}

} // namespace

Decoded<FrameHeader> decode_frame_header(std::span<const std::uint8_t, kFrameHeaderSize> bytes) {
    return {load_le<std::uint32_t>(&bytes[8]), validate(bytes)};
}

} // namespace rpmem::protocol
