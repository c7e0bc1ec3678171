// SPDX-License-Identifier: BSD-3-Clause
#include "status_json.h"

#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace rpmem::tools {

namespace {

// "2026-12-02T05:50:01.123Z".
std::string utc_time(std::uint64_t unix_time_ms) {
    const std::time_t seconds = static_cast<std::time_t>(unix_time_ms / 1000);
    std::tm parts{};
    ::gmtime_r(&seconds, &parts);
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", parts, unix_time_ms % 1000);
}

} // namespace

Json session_json(const protocol::SessionStatus& session) {
    Json json = {
        {"id", session.id},
        {"identity", session.identity},
        {"peer", session.peer},
        {"connected_ms", session.connected_ms},
    };
    if (session.pool_set.empty()) {
        json["pool_set"] = nullptr;
        return json;
    }
    json["pool_set"] = session.pool_set;
    json["replica"] = {{"state", protocol::name_of(session.state)},
                       {"generation", session.generation}};
    json["data_path"] = {{"provider", session.provider},
                         {"persist_method", protocol::name_of(session.persist_method)},
                         {"method_reason", session.method_reason},
                         {"lanes", session.lanes}};
    json["persisted"] = {{"messages", session.persists},
                         {"bytes", session.persisted_bytes},
                         {"latency_p50_ns", session.latency_p50_ns},
                         {"latency_p99_ns", session.latency_p99_ns}};
    json["resync"] = {{"active", session.resync_active},
                      {"done_bytes", session.resync_done_bytes},
                      {"total_bytes", session.resync_total_bytes}};
    // The initiator's queue behind the last message of ordered records: a replica behind by
    // at least that much (asynchronous replication; all zero when synchronous).
    json["asynchronous"] = {{"active", session.ordered_messages > 0},
                            {"messages", session.ordered_messages},
                            {"lag_bytes", session.lag_bytes},
                            {"max_lag_bytes", session.max_lag_bytes}};
    return json;
}

Json status_json(const Target& target, const protocol::StatusReply& status) {
    Json sessions = Json::array();
    for (const auto& session : status.session_list)
        sessions.push_back(session_json(session));
    return {
        {"target", target.to_string()},
        {"daemon",
         {
             {"software", status.software},
             {"protocol_version", status.protocol_version},
             {"uptime_seconds", status.uptime_seconds},
             {"sessions", status.sessions},
             {"max_sessions", status.max_sessions},
             {"max_sessions_per_client", status.max_sessions_per_client},
             {"pending_connections", status.pending_connections},
             {"max_pending_connections", status.max_pending_connections},
             {"workers", status.workers},
             {"pools_in_use", status.pools_in_use},
         }},
        {"all_identities", status.all_identities},
        {"sessions", std::move(sessions)},
    };
}

Json event_json(const protocol::DaemonEvent& event) {
    Json json = {
        {"sequence", event.sequence},
        {"time", utc_time(event.unix_time_ms)},
        {"kind", protocol::name_of(event.kind)},
    };
    if (event.session_id != 0)
        json["session"] = event.session_id;
    if (!event.identity.empty())
        json["identity"] = event.identity;
    if (!event.peer.empty())
        json["peer"] = event.peer;
    if (!event.pool_set.empty())
        json["pool_set"] = event.pool_set;
    if (event.has_state) {
        json["state"] = protocol::name_of(event.state);
        json["generation"] = event.generation;
    }
    if (event.kind == protocol::EventKind::resync_started ||
        event.kind == protocol::EventKind::resync_progress ||
        event.kind == protocol::EventKind::resync_finished) {
        json["done_bytes"] = event.done_bytes;
        json["total_bytes"] = event.total_bytes;
    }
    if (!event.reason.empty())
        json["reason"] = event.reason;
    return json;
}

} // namespace rpmem::tools
