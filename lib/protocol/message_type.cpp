// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/message_type.h"

#include "protocol/frame_header.h"
#include "protocol/message_limits.h"

namespace rpmem::protocol {

namespace {

// Wire sizes of the building blocks, kept next to the limits they derive from; codec.cpp
// writes exactly these fields.
constexpr std::size_t string_size(std::size_t max_length) {
    return 2 + max_length;
}
constexpr std::size_t kAttributesSize = 104;
constexpr std::size_t kTokenSize = 32;
constexpr std::size_t kUuidSize = 16;
constexpr std::size_t kStatusSize = 2 + string_size(kMaxMessageLength);
constexpr std::size_t kDataPathSize = string_size(kMaxProviderNameLength) +
                                      string_size(kMaxHostLength) + 2 + 8 + 8 + 1 + 4 + 1 + 4 + 8 +
                                      kTokenSize;
constexpr std::size_t kPoolRequestSize = string_size(kMaxPoolSetNameLength) + 8 + 4 + 1 + 1;
constexpr std::size_t kSessionStatusSize =
    8 + string_size(kMaxIdentityLength) + string_size(kMaxPeerLength) + 8 +
    string_size(kMaxPoolSetNameLength) + string_size(kMaxProviderNameLength) + 1 +
    string_size(kMaxMessageLength) + 4 + 1 + 8 + 8 * 4 + 1 + 8 * 2 + 8 * 3;
constexpr std::size_t kDaemonEventSize =
    8 + 8 + 2 + 8 + string_size(kMaxIdentityLength) + string_size(kMaxPeerLength) +
    string_size(kMaxPoolSetNameLength) + 1 + 1 + 8 + 8 + 8 + string_size(kMaxMessageLength);

constexpr std::size_t body_limit(MessageType type) noexcept {
    switch (type) {
    case MessageType::hello:
        return 2 + 2 + 8 + string_size(kMaxSoftwareLength);
    case MessageType::hello_reply:
        return kStatusSize + 2 + 8 + string_size(kMaxSoftwareLength) + 8 + 4 +
               string_size(kMaxIdentityLength);
    case MessageType::create:
        return kPoolRequestSize + kAttributesSize;
    case MessageType::create_reply:
        return kStatusSize + kDataPathSize + 8;
    case MessageType::open:
        return kPoolRequestSize + 8;
    case MessageType::open_reply:
        return kStatusSize + kDataPathSize + kAttributesSize + 1 + 8;
    case MessageType::close:
        return 4;
    case MessageType::set_attr:
        return kAttributesSize;
    case MessageType::remove:
        return string_size(kMaxPoolSetNameLength) + 4;
    case MessageType::status:
        return 4;
    case MessageType::status_reply:
        return kStatusSize + string_size(kMaxSoftwareLength) + 2 + 8 + 4 * 7 + 1 + 4 + 4 + 2 +
               kMaxStatusSessions * kSessionStatusSize;
    case MessageType::events:
        return 8;
    case MessageType::events_reply:
        return kStatusSize + 8 + 8 + 2 + kMaxEventsPerReply * kDaemonEventSize;
    case MessageType::resync_report:
        return 1 + 8 + 8;
    case MessageType::digest:
        return 8 + 8 + 4;
    case MessageType::promote:
        return string_size(kMaxPoolSetNameLength) + 4;
    case MessageType::promote_reply:
        return kStatusSize + 1 + 8 + 8 + 4;
    case MessageType::demote:
        return string_size(kMaxPoolSetNameLength) + 8;
    case MessageType::demote_reply:
        return kStatusSize + 1 + 8;
    case MessageType::rejoin:
        return string_size(kMaxPoolSetNameLength) + 8 + kUuidSize * 2;
    case MessageType::rejoin_reply:
        return kStatusSize + kUuidSize + 1 + 8;
    case MessageType::attach_replica:
        return string_size(kMaxPoolSetNameLength) + kUuidSize;
    case MessageType::attach_replica_reply:
        return kStatusSize + kUuidSize * 3 + 1 + 8 + 1;
    case MessageType::digest_reply:
        return kStatusSize + 4 + 8 * kMaxDigestExtents;
    case MessageType::close_reply:
    case MessageType::set_attr_reply:
    case MessageType::remove_reply:
    case MessageType::error_reply:
    case MessageType::resync_report_reply:
        return kStatusSize;
    case MessageType::ping:
    case MessageType::pong:
        return 0;
    }
    return 0;
}

// The status and digest replies are the largest messages; every frame must fit the hard frame
// limit.
static_assert(kFrameHeaderSize + body_limit(MessageType::status_reply) <= kMaxFrameSize);
static_assert(kFrameHeaderSize + body_limit(MessageType::digest_reply) <= kMaxFrameSize);
static_assert(kFrameHeaderSize + body_limit(MessageType::events_reply) <= kMaxFrameSize);

} // namespace

std::optional<MessageType> message_type_from_wire(std::uint16_t value) noexcept {
    if ((value >= 1 && value <= 16) || (value >= 18 && value <= 32))
        return static_cast<MessageType>(value);
    return std::nullopt;
}

bool is_request(MessageType type) noexcept {
    return (static_cast<std::uint16_t>(type) & 1) != 0;
}

MessageType reply_type_of(MessageType request) noexcept {
    if (!is_request(request))
        return MessageType::error_reply;
    return static_cast<MessageType>(static_cast<std::uint16_t>(request) + 1);
}

std::size_t max_body_length(MessageType type) noexcept {
    return body_limit(type);
}

std::string_view name_of(MessageType type) noexcept {
    switch (type) {
    case MessageType::hello:
        return "hello";
    case MessageType::hello_reply:
        return "hello_reply";
    case MessageType::create:
        return "create";
    case MessageType::create_reply:
        return "create_reply";
    case MessageType::open:
        return "open";
    case MessageType::open_reply:
        return "open_reply";
    case MessageType::close:
        return "close";
    case MessageType::close_reply:
        return "close_reply";
    case MessageType::set_attr:
        return "set_attr";
    case MessageType::set_attr_reply:
        return "set_attr_reply";
    case MessageType::remove:
        return "remove";
    case MessageType::remove_reply:
        return "remove_reply";
    case MessageType::status:
        return "status";
    case MessageType::status_reply:
        return "status_reply";
    case MessageType::ping:
        return "ping";
    case MessageType::pong:
        return "pong";
    case MessageType::error_reply:
        return "error_reply";
    case MessageType::digest:
        return "digest";
    case MessageType::digest_reply:
        return "digest_reply";
    case MessageType::promote:
        return "promote";
    case MessageType::promote_reply:
        return "promote_reply";
    case MessageType::demote:
        return "demote";
    case MessageType::demote_reply:
        return "demote_reply";
    case MessageType::rejoin:
        return "rejoin";
    case MessageType::rejoin_reply:
        return "rejoin_reply";
    case MessageType::attach_replica:
        return "attach_replica";
    case MessageType::attach_replica_reply:
        return "attach_replica_reply";
    case MessageType::events:
        return "events";
    case MessageType::events_reply:
        return "events_reply";
    case MessageType::resync_report:
        return "resync_report";
    case MessageType::resync_report_reply:
        return "resync_report_reply";
    }
    return "unknown";
}

} // namespace rpmem::protocol
