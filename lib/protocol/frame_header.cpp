// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/frame_header.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "protocol/message_limits.h"
#include "protocol/status.h"
#include "protocol/version.h"

namespace rpmem::protocol {

namespace {

void put_le(std::uint8_t* out, std::uint64_t value, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i)
        out[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

std::uint32_t get_le(const std::uint8_t* in, std::size_t size) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < size; ++i)
        value |= static_cast<std::uint32_t>(in[i]) << (8 * i);
    return value;
}

tl::unexpected<Error> frame_error(Status status, std::string message) {
    return fail(errno_of(status), std::move(message), ErrorSource::protocol,
                static_cast<int>(status));
}

} // namespace

FrameHeaderBytes encode_frame_header(const FrameHeader& header) noexcept {
    FrameHeaderBytes bytes{};
    std::copy(kFrameMagic.begin(), kFrameMagic.end(), bytes.begin());
    put_le(&bytes[4], header.version, 2);
    put_le(&bytes[6], static_cast<std::uint16_t>(header.type), 2);
    put_le(&bytes[8], header.request_id, 4);
    put_le(&bytes[12], header.body_length, 4);
    return bytes;
}

Result<FrameHeader> decode_frame_header(std::span<const std::uint8_t, kFrameHeaderSize> bytes) {
    if (!std::equal(kFrameMagic.begin(), kFrameMagic.end(), bytes.begin()))
        return frame_error(Status::bad_message,
                           fmt::format("frame header: bad magic {:02x} {:02x} {:02x} {:02x}",
                                       bytes[0], bytes[1], bytes[2], bytes[3]));

    FrameHeader header;
    header.version = static_cast<std::uint16_t>(get_le(&bytes[4], 2));
    auto raw_type = static_cast<std::uint16_t>(get_le(&bytes[6], 2));
    header.request_id = get_le(&bytes[8], 4);
    header.body_length = get_le(&bytes[12], 4);

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

} // namespace rpmem::protocol
