// SPDX-License-Identifier: BSD-3-Clause
// The failover requests of a DaemonSession: promote, demote, rejoin, attach_replica. The pool
// work is PoolStore's; this side checks the caller's privilege, logs, records events and
// answers.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/log_text.h"
#include "protocol/message_limits.h"
#include "rpmemd/supervisor/client_message.h"
#include "rpmemd/supervisor/daemon_session.h"
#include "rpmemd/supervisor/status_error.h"

namespace rpmem::daemon {

namespace {

using protocol::Reply;
using protocol::Status;

// How long a promote waits for the session that has the set to stop writing: its data plane
// stop waits for the worker's answer (or kills it) well within this.
constexpr std::chrono::milliseconds kFenceTimeout{15'000};

std::string clip_message(std::string_view text) {
    if (text.size() <= protocol::kMaxMessageLength)
        return std::string(text);
    return escape_for_log(text, protocol::kMaxMessageLength - 32);
}

} // namespace

PoolRegistry::Evict DaemonSession::evictor() const {
    return [end = end_, name = log_name_] {
        spdlog::warn("{}: ended: its pool set is being promoted (fenced)", name);
        if (end)
            end(Error(ESTALE, "the pool set was promoted to a primary: this session is fenced",
                      ErrorSource::system, ESTALE));
    };
}

std::optional<Error> DaemonSession::refuse_unless_admin(std::string_view what) const {
    if (sees_everything())
        return std::nullopt;
    spdlog::warn("{}: {} refused: identity '{}' is not an admin-client", log_name_, what,
                 escape_for_log(peer_.identity));
    record(protocol::EventKind::refused,
           fmt::format("{}: identity '{}' is not an admin-client", what, peer_.identity));
    return status_error(Status::not_permitted,
                        fmt::format("{} needs an identity listed in rpmemd's admin-client", what));
}

void DaemonSession::record_set_state(std::string_view pool_set, protocol::ReplicaState state,
                                     std::uint64_t generation, std::string reason) const {
    protocol::DaemonEvent event = event_of(protocol::EventKind::state_changed);
    event.pool_set = std::string(pool_set.substr(0, protocol::kMaxPoolSetNameLength));
    event.has_state = true;
    event.state = state;
    event.generation = generation;
    event.reason = clip_message(reason);
    services_.events.record(std::move(event));
}

Reply DaemonSession::promote(const protocol::PromoteRequest& request) {
    const std::string set = escape_for_log(request.pool_set);
    if (auto refused = refuse_unless_admin("promote"))
        return protocol::PromoteReply{Status::not_permitted, refused->message()};
    spdlog::warn("{}: promote '{}'{}", log_name_, set, request.force ? " (--force)" : "");
    auto promoted =
        services_.store.promote(peer_.identity, request.pool_set, request.force, kFenceTimeout);
    if (!promoted) {
        Status status = reply_status_for(promoted.error(), Status::invalid_request);
        spdlog::warn("{}: promote '{}' refused: {}: {}", log_name_, set, protocol::name_of(status),
                     escape_for_log(promoted.error().message()));
        protocol::PromoteReply reply{status, client_message(promoted.error().message())};
        return reply;
    }
    const auto& outcome = *promoted;
    std::string reason =
        outcome.already
            ? "promote repeated: already promoted"
            : fmt::format("promoted from {} at generation {}{}",
                          protocol::name_of(outcome.before.state), outcome.before.generation,
                          outcome.session_ended ? "; the session that had it was ended" : "");
    if (!outcome.loss_note.empty()) {
        reason += "; " + outcome.loss_note;
        spdlog::warn("{}: promote '{}': {}", log_name_, set, outcome.loss_note);
    }
    spdlog::warn("{}: pool set '{}' promoted to a primary at generation {} (was {} at {})",
                 log_name_, set, outcome.after.generation, protocol::name_of(outcome.before.state),
                 outcome.before.generation);
    if (!outcome.already)
        record_set_state(request.pool_set, outcome.after.state, outcome.after.generation, reason);
    return protocol::PromoteReply{
        Status::ok,
        clip_message(outcome.already ? "already promoted" : outcome.loss_note),
        outcome.before.state,
        outcome.before.generation,
        outcome.after.generation,
        outcome.session_ended ? 1U : 0U};
}

Reply DaemonSession::demote(const protocol::DemoteRequest& request) {
    const std::string set = escape_for_log(request.pool_set);
    if (auto refused = refuse_unless_admin("demote"))
        return protocol::DemoteReply{Status::not_permitted, refused->message()};
    spdlog::warn("{}: demote '{}'", log_name_, set);
    auto demoted = services_.store.demote(peer_.identity, request.pool_set, request.generation);
    if (!demoted) {
        Status status = reply_status_for(demoted.error(), Status::invalid_request);
        spdlog::warn("{}: demote '{}' refused: {}: {}", log_name_, set, protocol::name_of(status),
                     escape_for_log(demoted.error().message()));
        return protocol::DemoteReply{status, client_message(demoted.error().message())};
    }
    spdlog::warn("{}: pool set '{}' demoted: a replica again, {} at generation {}", log_name_, set,
                 protocol::name_of(demoted->state), demoted->generation);
    record_set_state(request.pool_set, demoted->state, demoted->generation,
                     "demoted: the promote was undone, the pool was never used as a primary");
    return protocol::DemoteReply{Status::ok, {}, demoted->state, demoted->generation};
}

Reply DaemonSession::rejoin(const protocol::RejoinRequest& request) {
    const std::string set = escape_for_log(request.pool_set);
    if (auto refused = refuse_unless_admin("rejoin"))
        return protocol::RejoinReply{Status::not_permitted, refused->message()};
    spdlog::warn("{}: rejoin '{}' as a replica at generation {}", log_name_, set,
                 request.generation);
    auto joined = services_.store.rejoin(peer_.identity, request.pool_set, request.generation,
                                         request.poolset_uuid, request.primary_uuid);
    if (!joined) {
        Status status = reply_status_for(joined.error(), Status::invalid_request);
        spdlog::warn("{}: rejoin '{}' refused: {}: {}", log_name_, set, protocol::name_of(status),
                     escape_for_log(joined.error().message()));
        return protocol::RejoinReply{status, client_message(joined.error().message())};
    }
    record_set_state(request.pool_set, protocol::ReplicaState::outdated, request.generation,
                     "rejoined as a replica of the new primary; its next open resyncs it");
    return protocol::RejoinReply{
        Status::ok, {}, *joined, protocol::ReplicaState::outdated, request.generation};
}

Reply DaemonSession::attach_replica(const protocol::AttachReplicaRequest& request) {
    const std::string set = escape_for_log(request.pool_set);
    if (auto refused = refuse_unless_admin("attach_replica"))
        return protocol::AttachReplicaReply{Status::not_permitted, refused->message()};
    const bool report_only = std::all_of(request.replica_uuid.begin(), request.replica_uuid.end(),
                                         [](auto b) { return b == 0; });
    spdlog::log(report_only ? spdlog::level::info : spdlog::level::warn,
                "{}: attach_replica '{}'{}", log_name_, set, report_only ? " (report only)" : "");
    auto attached =
        services_.store.attach_replica(peer_.identity, request.pool_set, request.replica_uuid);
    if (!attached) {
        Status status = reply_status_for(attached.error(), Status::invalid_request);
        spdlog::warn("{}: attach_replica '{}' refused: {}: {}", log_name_, set,
                     protocol::name_of(status), escape_for_log(attached.error().message()));
        return protocol::AttachReplicaReply{status, client_message(attached.error().message())};
    }
    if (!report_only)
        record_set_state(request.pool_set, attached->record.state, attached->record.generation,
                         "a replica was attached to this primary");
    return protocol::AttachReplicaReply{Status::ok,
                                        {},
                                        attached->poolset_uuid,
                                        attached->own_uuid,
                                        attached->replica_uuid,
                                        attached->record.state,
                                        attached->record.generation,
                                        attached->promotable,
                                        attached->in_use};
}

} // namespace rpmem::daemon
