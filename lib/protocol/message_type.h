// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rpmem::protocol {

// The type field of a frame header. Requests are odd, their replies the next even number;
// error_reply answers a frame the server could not take (bad framing, unknown type, ...).
enum class MessageType : std::uint16_t {
    hello = 1,
    hello_reply = 2,
    create = 3,
    create_reply = 4,
    open = 5,
    open_reply = 6,
    close = 7,
    close_reply = 8,
    set_attr = 9,
    set_attr_reply = 10,
    remove = 11,
    remove_reply = 12,
    status = 13,
    status_reply = 14,
    ping = 15,
    pong = 16,
    error_reply = 18,
    digest = 19,
    digest_reply = 20,
    promote = 21,
    promote_reply = 22,
    demote = 23,
    demote_reply = 24,
    rejoin = 25,
    rejoin_reply = 26,
    attach_replica = 27,
    attach_replica_reply = 28,
    events = 29,
    events_reply = 30,
    resync_report = 31,
    resync_report_reply = 32,
};

// The MessageType with this wire value, or nothing for an unknown value.
std::optional<MessageType> message_type_from_wire(std::uint16_t value) noexcept;

// True for the types a client sends.
bool is_request(MessageType type) noexcept;

// The reply type that answers a request type (error_reply is always possible too).
MessageType reply_type_of(MessageType request) noexcept;

// The largest body a well-formed message of this type can have; the frame decoder refuses a
// header announcing more before anything is allocated.
std::size_t max_body_length(MessageType type) noexcept;

// "create", "open_reply", ...; for logs and messages.
std::string_view name_of(MessageType type) noexcept;

} // namespace rpmem::protocol
