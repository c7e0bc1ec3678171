// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/reply.h"

#include <type_traits>

namespace rpmem::protocol {

MessageType type_of(const Reply& reply) noexcept {
    return std::visit([](const auto& message) { return message.kType; }, reply);
}

Status reply_status(const Reply& reply) noexcept {
    return std::visit(
        [](const auto& message) {
            if constexpr (std::is_same_v<std::decay_t<decltype(message)>, Pong>)
                return Status::ok;
            else
                return message.status;
        },
        reply);
}

const std::string& reply_message(const Reply& reply) noexcept {
    static const std::string kEmpty;
    return std::visit(
        [](const auto& message) -> const std::string& {
            if constexpr (std::is_same_v<std::decay_t<decltype(message)>, Pong>)
                return kEmpty;
            else
                return message.message;
        },
        reply);
}

Reply failure_reply(MessageType request, Status status, std::string message) {
    auto fill = [&](auto reply) -> Reply {
        reply.status = status;
        reply.message = std::move(message);
        return reply;
    };
    switch (request) {
    case MessageType::hello:
        return fill(HelloReply{});
    case MessageType::create:
        return fill(CreateReply{});
    case MessageType::open:
        return fill(OpenReply{});
    case MessageType::close:
        return fill(CloseReply{});
    case MessageType::set_attr:
        return fill(SetAttrReply{});
    case MessageType::remove:
        return fill(RemoveReply{});
    case MessageType::status:
        return fill(StatusReply{});
    case MessageType::digest:
        return fill(DigestReply{});
    case MessageType::events:
        return fill(EventsReply{});
    case MessageType::resync_report:
        return fill(ResyncReportReply{});
    case MessageType::promote:
        return fill(PromoteReply{});
    case MessageType::demote:
        return fill(DemoteReply{});
    case MessageType::rejoin:
        return fill(RejoinReply{});
    case MessageType::attach_replica:
        return fill(AttachReplicaReply{});
    default:
        return fill(ErrorReply{});
    }
}

} // namespace rpmem::protocol
