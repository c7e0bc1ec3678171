// SPDX-License-Identifier: BSD-3-Clause
#include "client/failover.h"

#include <string>

#include <fmt/format.h>

#include "channel/client.h"
#include "client/control.h"
#include "protocol/request.h"

namespace rpmem::client {

namespace {

// One request on a channel of its own.
template <typename ReplyType, typename Request>
Result<ReplyType> call_once(const Settings& settings, const Target& target, const Request& request,
                            const std::string& step) {
    auto control = connect_control(settings, target);
    if (!control)
        return fail(std::move(control.error()));
    auto reply = channel::expect<ReplyType>((*control)->call(request), step);
    (*control)->close();
    return reply;
}

} // namespace

Result<protocol::PromoteReply> promote(const Settings& settings, const Target& target,
                                       std::string_view pool_set, bool force) {
    return call_once<protocol::PromoteReply>(
        settings, target, protocol::PromoteRequest{std::string(pool_set), force},
        fmt::format("promoting pool set {} on {}", pool_set, target.to_string()));
}

Result<protocol::DemoteReply> demote(const Settings& settings, const Target& target,
                                     std::string_view pool_set, std::uint64_t generation) {
    return call_once<protocol::DemoteReply>(
        settings, target, protocol::DemoteRequest{std::string(pool_set), generation},
        fmt::format("demoting pool set {} on {}", pool_set, target.to_string()));
}

Result<protocol::AttachReplicaReply> describe(const Settings& settings, const Target& target,
                                              std::string_view pool_set) {
    return call_once<protocol::AttachReplicaReply>(
        settings, target, protocol::AttachReplicaRequest{std::string(pool_set), {}},
        fmt::format("reading the role of pool set {} on {}", pool_set, target.to_string()));
}

Result<RejoinOutcome> rejoin(const Settings& settings, const Target& primary_target,
                             std::string_view primary_set, const Target& replica_target,
                             std::string_view replica_set) {
    auto primary = describe(settings, primary_target, primary_set);
    if (!primary)
        return fail(std::move(primary.error()));
    if (primary->state != protocol::ReplicaState::promoted)
        return fail(EINVAL, fmt::format("pool set {} on {} is {}, not promoted: promote it "
                                        "before its old primary rejoins it",
                                        primary_set, primary_target.to_string(),
                                        protocol::name_of(primary->state)));
    protocol::RejoinRequest request{std::string(replica_set), primary->generation,
                                    primary->poolset_uuid, primary->primary_uuid};
    auto replica = call_once<protocol::RejoinReply>(
        settings, replica_target, request,
        fmt::format("making pool set {} on {} a replica", replica_set, replica_target.to_string()));
    if (!replica)
        return fail(std::move(replica.error()));
    auto linked = call_once<protocol::AttachReplicaReply>(
        settings, primary_target,
        protocol::AttachReplicaRequest{std::string(primary_set), replica->replica_uuid},
        fmt::format("linking pool set {} on {} to its new replica", primary_set,
                    primary_target.to_string()));
    if (!linked)
        return fail(std::move(linked.error()));
    return RejoinOutcome{std::move(*linked), std::move(*replica)};
}

} // namespace rpmem::client
