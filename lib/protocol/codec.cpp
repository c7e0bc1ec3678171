// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/codec.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "protocol/byte_reader.h"
#include "protocol/byte_writer.h"
#include "protocol/message_limits.h"
#include "protocol/version.h"

namespace rpmem::protocol {

namespace {

constexpr std::uint32_t kCloseRemove = 1U << 0;
constexpr std::uint32_t kCloseInSync = 1U << 1;
constexpr std::uint32_t kCloseUntouched = 1U << 2;
constexpr std::uint32_t kRemoveForce = 1U << 0;   // PMDK's RPMEM_REMOVE_FORCE
constexpr std::uint32_t kRemovePoolSet = 1U << 1; // PMDK's RPMEM_REMOVE_POOL_SET
constexpr std::uint8_t kRolePromotable = 1U << 0;
constexpr std::uint8_t kRoleInUse = 1U << 1;

template <std::size_t N>
std::span<const std::uint8_t> as_bytes(const std::array<char, N>& chars) {
    return {reinterpret_cast<const std::uint8_t*>(chars.data()), N};
}

template <std::size_t N>
std::span<std::uint8_t> as_writable_bytes(std::array<char, N>& chars) {
    return {reinterpret_cast<std::uint8_t*>(chars.data()), N};
}

// ---- building blocks -------------------------------------------------------------------------

void write_attributes(ByteWriter& w, const PoolAttributes& a) {
    w.bytes(as_bytes(a.signature));
    w.u32(a.major);
    w.u32(a.compat_features);
    w.u32(a.incompat_features);
    w.u32(a.ro_compat_features);
    w.bytes(a.poolset_uuid);
    w.bytes(a.uuid);
    w.bytes(a.next_uuid);
    w.bytes(a.prev_uuid);
    w.bytes(a.user_flags);
}

PoolAttributes read_attributes(ByteReader& r) {
    PoolAttributes a;
    r.bytes(as_writable_bytes(a.signature), "attributes.signature");
    a.major = r.u32("attributes.major");
    a.compat_features = r.u32("attributes.compat_features");
    a.incompat_features = r.u32("attributes.incompat_features");
    a.ro_compat_features = r.u32("attributes.ro_compat_features");
    r.bytes(a.poolset_uuid, "attributes.poolset_uuid");
    r.bytes(a.uuid, "attributes.uuid");
    r.bytes(a.next_uuid, "attributes.next_uuid");
    r.bytes(a.prev_uuid, "attributes.prev_uuid");
    r.bytes(a.user_flags, "attributes.user_flags");
    return a;
}

void write_status(ByteWriter& w, Status status, const std::string& message) {
    w.u16(static_cast<std::uint16_t>(status));
    w.string(message, "message", kMaxMessageLength);
}

template <typename ReplyType>
void read_status(ByteReader& r, ReplyType& reply) {
    auto raw = r.u16("status");
    auto status = status_from_wire(raw);
    r.require(status.has_value(), "status", fmt::format("unknown status {}", raw));
    reply.status = status.value_or(Status::fatal);
    reply.message = r.string("message", kMaxMessageLength);
}

std::uint32_t read_flags(ByteReader& r, std::string_view field, std::uint32_t known) {
    auto flags = r.u32(field);
    r.require((flags & ~known) == 0, field, fmt::format("unknown flag bits {:#x}", flags & ~known));
    return flags;
}

// ---- requests --------------------------------------------------------------------------------

void write_body(ByteWriter& w, const Hello& m) {
    w.u16(m.min_version);
    w.u16(m.max_version);
    w.u64(m.capabilities);
    w.string(m.software, "software", kMaxSoftwareLength);
}

void read_body(ByteReader& r, Hello& m) {
    m.min_version = r.u16("min_version");
    m.max_version = r.u16("max_version");
    m.capabilities = r.u64("capabilities");
    m.software = r.string("software", kMaxSoftwareLength);
}

template <typename PoolRequest>
void write_pool_request(ByteWriter& w, const PoolRequest& m) {
    w.string(m.pool_set, "pool_set", kMaxPoolSetNameLength);
    w.u64(m.pool_size);
    w.u32(m.lanes);
    w.u8(static_cast<std::uint8_t>(m.provider));
    w.u8(static_cast<std::uint8_t>(m.persist_method));
}

template <typename PoolRequest>
void read_pool_request(ByteReader& r, PoolRequest& m) {
    m.pool_set = r.string("pool_set", kMaxPoolSetNameLength);
    m.pool_size = r.u64("pool_size");
    m.lanes = r.u32("lanes");
    m.provider = read_provider(r);
    m.persist_method = read_persist_method(r);
}

void write_body(ByteWriter& w, const CreateRequest& m) {
    write_pool_request(w, m);
    write_attributes(w, m.attributes);
}

void read_body(ByteReader& r, CreateRequest& m) {
    read_pool_request(r, m);
    m.attributes = read_attributes(r);
}

void write_body(ByteWriter& w, const OpenRequest& m) {
    write_pool_request(w, m);
    w.u64(m.expected_generation);
}

void read_body(ByteReader& r, OpenRequest& m) {
    read_pool_request(r, m);
    m.expected_generation = r.u64("expected_generation");
}

void write_body(ByteWriter& w, const CloseRequest& m) {
    w.u32((m.remove ? kCloseRemove : 0) | (m.in_sync ? kCloseInSync : 0) |
          (m.untouched ? kCloseUntouched : 0));
}

void read_body(ByteReader& r, CloseRequest& m) {
    auto flags = read_flags(r, "flags", kCloseRemove | kCloseInSync | kCloseUntouched);
    r.require((flags & (kCloseInSync | kCloseUntouched)) != (kCloseInSync | kCloseUntouched),
              "flags", "in_sync and untouched exclude each other");
    m.remove = (flags & kCloseRemove) != 0;
    m.in_sync = (flags & kCloseInSync) != 0;
    m.untouched = (flags & kCloseUntouched) != 0;
}

void write_body(ByteWriter& w, const SetAttrRequest& m) {
    write_attributes(w, m.attributes);
}

void read_body(ByteReader& r, SetAttrRequest& m) {
    m.attributes = read_attributes(r);
}

void write_body(ByteWriter& w, const RemoveRequest& m) {
    w.string(m.pool_set, "pool_set", kMaxPoolSetNameLength);
    w.u32((m.force ? kRemoveForce : 0) | (m.remove_set_file ? kRemovePoolSet : 0));
}

void read_body(ByteReader& r, RemoveRequest& m) {
    m.pool_set = r.string("pool_set", kMaxPoolSetNameLength);
    auto flags = read_flags(r, "flags", kRemoveForce | kRemovePoolSet);
    m.force = (flags & kRemoveForce) != 0;
    m.remove_set_file = (flags & kRemovePoolSet) != 0;
}

void write_body(ByteWriter& w, const DigestRequest& m) {
    if (auto problem = check_digest_request(m))
        w.require(false, fmt::format("{}: {}", problem->field, problem->reason));
    w.u64(m.offset);
    w.u64(m.length);
    w.u32(m.extent_size);
}

void read_body(ByteReader& r, DigestRequest& m) {
    m.offset = r.u64("offset");
    m.length = r.u64("length");
    m.extent_size = r.u32("extent_size");
    if (r.failed())
        return;
    if (auto problem = check_digest_request(m))
        r.require(false, problem->field, problem->reason);
}

void write_body(ByteWriter& w, const StatusRequest& m) {
    w.u32(m.first_session);
}
void read_body(ByteReader& r, StatusRequest& m) {
    m.first_session = r.u32("first_session");
}

void write_body(ByteWriter& w, const EventsRequest& m) {
    w.u64(m.after_sequence);
}
void read_body(ByteReader& r, EventsRequest& m) {
    m.after_sequence = r.u64("after_sequence");
}

void write_body(ByteWriter& w, const ResyncReport& m) {
    w.require(m.done_bytes <= m.total_bytes,
              fmt::format("done_bytes {} exceed total_bytes {}", m.done_bytes, m.total_bytes));
    w.u8(static_cast<std::uint8_t>(m.phase));
    w.u64(m.done_bytes);
    w.u64(m.total_bytes);
}
void read_body(ByteReader& r, ResyncReport& m) {
    auto raw = r.u8("phase");
    auto phase = resync_phase_from_wire(raw);
    r.require(phase.has_value(), "phase", fmt::format("unknown phase {}", raw));
    m.phase = phase.value_or(ResyncPhase::started);
    m.done_bytes = r.u64("done_bytes");
    m.total_bytes = r.u64("total_bytes");
    r.require(m.done_bytes <= m.total_bytes, "done_bytes",
              fmt::format("{} exceed total_bytes {}", m.done_bytes, m.total_bytes));
}
constexpr std::uint32_t kPromoteForce = 1U << 0;

void write_body(ByteWriter& w, const PromoteRequest& m) {
    w.string(m.pool_set, "pool_set", kMaxPoolSetNameLength);
    w.u32(m.force ? kPromoteForce : 0);
}
void read_body(ByteReader& r, PromoteRequest& m) {
    m.pool_set = r.string("pool_set", kMaxPoolSetNameLength);
    m.force = (read_flags(r, "flags", kPromoteForce) & kPromoteForce) != 0;
}

void write_body(ByteWriter& w, const DemoteRequest& m) {
    w.string(m.pool_set, "pool_set", kMaxPoolSetNameLength);
    w.u64(m.generation);
}
void read_body(ByteReader& r, DemoteRequest& m) {
    m.pool_set = r.string("pool_set", kMaxPoolSetNameLength);
    m.generation = r.u64("generation");
}

void write_body(ByteWriter& w, const RejoinRequest& m) {
    w.require(m.generation != 0, "generation 0: a rejoin needs the new primary's generation");
    w.string(m.pool_set, "pool_set", kMaxPoolSetNameLength);
    w.u64(m.generation);
    w.bytes(m.poolset_uuid);
    w.bytes(m.primary_uuid);
}
void read_body(ByteReader& r, RejoinRequest& m) {
    m.pool_set = r.string("pool_set", kMaxPoolSetNameLength);
    m.generation = r.u64("generation");
    r.require(m.generation != 0, "generation", "0: a rejoin needs the new primary's generation");
    r.bytes(m.poolset_uuid, "poolset_uuid");
    r.bytes(m.primary_uuid, "primary_uuid");
}

void write_body(ByteWriter& w, const AttachReplicaRequest& m) {
    w.string(m.pool_set, "pool_set", kMaxPoolSetNameLength);
    w.bytes(m.replica_uuid);
}
void read_body(ByteReader& r, AttachReplicaRequest& m) {
    m.pool_set = r.string("pool_set", kMaxPoolSetNameLength);
    r.bytes(m.replica_uuid, "replica_uuid");
}

void write_body(ByteWriter&, const Ping&) {}
void read_body(ByteReader&, Ping&) {}

// ---- replies ---------------------------------------------------------------------------------

void write_body(ByteWriter& w, const HelloReply& m) {
    write_status(w, m.status, m.message);
    w.u16(m.version);
    w.u64(m.capabilities);
    w.string(m.software, "software", kMaxSoftwareLength);
    w.u64(m.session_id);
    w.u32(m.heartbeat_timeout_ms);
    w.string(m.identity, "identity", kMaxIdentityLength);
}

void read_body(ByteReader& r, HelloReply& m) {
    read_status(r, m);
    m.version = r.u16("version");
    m.capabilities = r.u64("capabilities");
    m.software = r.string("software", kMaxSoftwareLength);
    m.session_id = r.u64("session_id");
    m.heartbeat_timeout_ms = r.u32("heartbeat_timeout_ms");
    m.identity = r.string("identity", kMaxIdentityLength);
}

void write_body(ByteWriter& w, const CreateReply& m) {
    write_status(w, m.status, m.message);
    write_data_path(w, m.data_path);
    w.u64(m.generation);
}

void read_body(ByteReader& r, CreateReply& m) {
    read_status(r, m);
    m.data_path = read_data_path(r);
    m.generation = r.u64("generation");
}

void write_body(ByteWriter& w, const OpenReply& m) {
    write_status(w, m.status, m.message);
    write_data_path(w, m.data_path);
    write_attributes(w, m.attributes);
    w.u8(static_cast<std::uint8_t>(m.state));
    w.u64(m.generation);
}

void read_body(ByteReader& r, OpenReply& m) {
    read_status(r, m);
    m.data_path = read_data_path(r);
    m.attributes = read_attributes(r);
    m.state = read_replica_state(r);
    m.generation = r.u64("generation");
}

template <typename StatusOnlyReply>
void write_status_only(ByteWriter& w, const StatusOnlyReply& m) {
    write_status(w, m.status, m.message);
}

void write_body(ByteWriter& w, const CloseReply& m) {
    write_status_only(w, m);
}
void read_body(ByteReader& r, CloseReply& m) {
    read_status(r, m);
}
void write_body(ByteWriter& w, const SetAttrReply& m) {
    write_status_only(w, m);
}
void read_body(ByteReader& r, SetAttrReply& m) {
    read_status(r, m);
}
void write_body(ByteWriter& w, const RemoveReply& m) {
    write_status_only(w, m);
}
void read_body(ByteReader& r, RemoveReply& m) {
    read_status(r, m);
}
void write_body(ByteWriter& w, const ErrorReply& m) {
    write_status_only(w, m);
}
void read_body(ByteReader& r, ErrorReply& m) {
    read_status(r, m);
}

void write_session_status(ByteWriter& w, const SessionStatus& m) {
    w.u64(m.id);
    w.string(m.identity, "session.identity", kMaxIdentityLength);
    w.string(m.peer, "session.peer", kMaxPeerLength);
    w.u64(m.connected_ms);
    w.string(m.pool_set, "session.pool_set", kMaxPoolSetNameLength);
    w.string(m.provider, "session.provider", kMaxProviderNameLength);
    w.u8(static_cast<std::uint8_t>(m.persist_method));
    w.string(m.method_reason, "session.method_reason", kMaxMessageLength);
    w.u32(m.lanes);
    w.u8(static_cast<std::uint8_t>(m.state));
    w.u64(m.generation);
    w.u64(m.persists);
    w.u64(m.persisted_bytes);
    w.u64(m.latency_p50_ns);
    w.u64(m.latency_p99_ns);
    w.boolean(m.resync_active);
    w.u64(m.resync_done_bytes);
    w.u64(m.resync_total_bytes);
    w.u64(m.ordered_messages);
    w.u64(m.lag_bytes);
    w.u64(m.max_lag_bytes);
}

SessionStatus read_session_status(ByteReader& r) {
    SessionStatus m;
    m.id = r.u64("session.id");
    m.identity = r.string("session.identity", kMaxIdentityLength);
    m.peer = r.string("session.peer", kMaxPeerLength);
    m.connected_ms = r.u64("session.connected_ms");
    m.pool_set = r.string("session.pool_set", kMaxPoolSetNameLength);
    m.provider = r.string("session.provider", kMaxProviderNameLength);
    m.persist_method = read_persist_method(r);
    m.method_reason = r.string("session.method_reason", kMaxMessageLength);
    m.lanes = r.u32("session.lanes");
    m.state = read_replica_state(r);
    m.generation = r.u64("session.generation");
    m.persists = r.u64("session.persists");
    m.persisted_bytes = r.u64("session.persisted_bytes");
    m.latency_p50_ns = r.u64("session.latency_p50_ns");
    m.latency_p99_ns = r.u64("session.latency_p99_ns");
    m.resync_active = r.boolean("session.resync_active");
    m.resync_done_bytes = r.u64("session.resync_done_bytes");
    m.resync_total_bytes = r.u64("session.resync_total_bytes");
    m.ordered_messages = r.u64("session.ordered_messages");
    m.lag_bytes = r.u64("session.lag_bytes");
    m.max_lag_bytes = r.u64("session.max_lag_bytes");
    return m;
}

void write_body(ByteWriter& w, const StatusReply& m) {
    write_status(w, m.status, m.message);
    w.string(m.software, "software", kMaxSoftwareLength);
    w.u16(m.protocol_version);
    w.u64(m.uptime_seconds);
    w.u32(m.sessions);
    w.u32(m.pools_in_use);
    w.u32(m.max_sessions);
    w.u32(m.max_sessions_per_client);
    w.u32(m.pending_connections);
    w.u32(m.max_pending_connections);
    w.u32(m.workers);
    w.boolean(m.all_identities);
    w.u32(m.visible_sessions);
    w.u32(m.first_session);
    w.require(m.session_list.size() <= kMaxStatusSessions,
              fmt::format("session_list has {} entries, the limit is {}", m.session_list.size(),
                          kMaxStatusSessions));
    w.u16(static_cast<std::uint16_t>(std::min(m.session_list.size(), kMaxStatusSessions)));
    for (const auto& session : m.session_list)
        write_session_status(w, session);
}

void read_body(ByteReader& r, StatusReply& m) {
    read_status(r, m);
    m.software = r.string("software", kMaxSoftwareLength);
    m.protocol_version = r.u16("protocol_version");
    m.uptime_seconds = r.u64("uptime_seconds");
    m.sessions = r.u32("sessions");
    m.pools_in_use = r.u32("pools_in_use");
    m.max_sessions = r.u32("max_sessions");
    m.max_sessions_per_client = r.u32("max_sessions_per_client");
    m.pending_connections = r.u32("pending_connections");
    m.max_pending_connections = r.u32("max_pending_connections");
    m.workers = r.u32("workers");
    m.all_identities = r.boolean("all_identities");
    m.visible_sessions = r.u32("visible_sessions");
    m.first_session = r.u32("first_session");
    auto count = r.u16("session_list count");
    r.require(count <= kMaxStatusSessions, "session_list count",
              fmt::format("{} exceeds the limit of {}", count, kMaxStatusSessions));
    if (r.failed())
        return;
    m.session_list.reserve(count);
    for (std::uint16_t i = 0; i < count && !r.failed(); ++i)
        m.session_list.push_back(read_session_status(r));
}

void write_daemon_event(ByteWriter& w, const DaemonEvent& m) {
    w.u64(m.sequence);
    w.u64(m.unix_time_ms);
    w.u16(static_cast<std::uint16_t>(m.kind));
    w.u64(m.session_id);
    w.string(m.identity, "event.identity", kMaxIdentityLength);
    w.string(m.peer, "event.peer", kMaxPeerLength);
    w.string(m.pool_set, "event.pool_set", kMaxPoolSetNameLength);
    w.boolean(m.has_state);
    w.u8(m.has_state ? static_cast<std::uint8_t>(m.state) : 0);
    w.u64(m.generation);
    w.u64(m.done_bytes);
    w.u64(m.total_bytes);
    w.string(m.reason, "event.reason", kMaxMessageLength);
}

DaemonEvent read_daemon_event(ByteReader& r) {
    DaemonEvent m;
    m.sequence = r.u64("event.sequence");
    m.unix_time_ms = r.u64("event.unix_time_ms");
    auto raw_kind = r.u16("event.kind");
    auto kind = event_kind_from_wire(raw_kind);
    r.require(kind.has_value(), "event.kind", fmt::format("unknown kind {}", raw_kind));
    m.kind = kind.value_or(EventKind::session_opened);
    m.session_id = r.u64("event.session_id");
    m.identity = r.string("event.identity", kMaxIdentityLength);
    m.peer = r.string("event.peer", kMaxPeerLength);
    m.pool_set = r.string("event.pool_set", kMaxPoolSetNameLength);
    m.has_state = r.boolean("event.has_state");
    if (m.has_state) {
        m.state = read_replica_state(r);
    } else {
        r.require(r.u8("event.state") == 0, "event.state", "set without has_state");
    }
    m.generation = r.u64("event.generation");
    m.done_bytes = r.u64("event.done_bytes");
    m.total_bytes = r.u64("event.total_bytes");
    m.reason = r.string("event.reason", kMaxMessageLength);
    return m;
}

void write_body(ByteWriter& w, const EventsReply& m) {
    write_status(w, m.status, m.message);
    w.u64(m.oldest_sequence);
    w.u64(m.newest_sequence);
    w.require(
        m.events.size() <= kMaxEventsPerReply,
        fmt::format("events has {} entries, the limit is {}", m.events.size(), kMaxEventsPerReply));
    w.u16(static_cast<std::uint16_t>(std::min(m.events.size(), kMaxEventsPerReply)));
    for (const auto& event : m.events)
        write_daemon_event(w, event);
}

void read_body(ByteReader& r, EventsReply& m) {
    read_status(r, m);
    m.oldest_sequence = r.u64("oldest_sequence");
    m.newest_sequence = r.u64("newest_sequence");
    auto count = r.u16("events count");
    r.require(count <= kMaxEventsPerReply, "events count",
              fmt::format("{} exceeds the limit of {}", count, kMaxEventsPerReply));
    if (r.failed())
        return;
    m.events.reserve(count);
    for (std::uint16_t i = 0; i < count && !r.failed(); ++i)
        m.events.push_back(read_daemon_event(r));
}

void write_body(ByteWriter& w, const ResyncReportReply& m) {
    write_status_only(w, m);
}
void read_body(ByteReader& r, ResyncReportReply& m) {
    read_status(r, m);
}

void write_body(ByteWriter& w, const DigestReply& m) {
    write_status(w, m.status, m.message);
    w.require(m.digests.size() <= kMaxDigestExtents,
              fmt::format("digests has {} entries, the limit is {}", m.digests.size(),
                          kMaxDigestExtents));
    w.u32(static_cast<std::uint32_t>(std::min(m.digests.size(), kMaxDigestExtents)));
    for (std::uint64_t digest : m.digests)
        w.u64(digest);
}

void read_body(ByteReader& r, DigestReply& m) {
    read_status(r, m);
    auto count = r.u32("digests count");
    r.require(count <= kMaxDigestExtents, "digests count",
              fmt::format("{} exceeds the limit of {}", count, kMaxDigestExtents));
    if (r.failed())
        return;
    m.digests.reserve(count);
    for (std::uint32_t i = 0; i < count && !r.failed(); ++i)
        m.digests.push_back(r.u64("digest"));
}

void write_body(ByteWriter& w, const PromoteReply& m) {
    write_status(w, m.status, m.message);
    w.u8(static_cast<std::uint8_t>(m.previous_state));
    w.u64(m.previous_generation);
    w.u64(m.generation);
    w.u32(m.sessions_ended);
}
void read_body(ByteReader& r, PromoteReply& m) {
    read_status(r, m);
    m.previous_state = read_replica_state(r);
    m.previous_generation = r.u64("previous_generation");
    m.generation = r.u64("generation");
    m.sessions_ended = r.u32("sessions_ended");
}

void write_body(ByteWriter& w, const DemoteReply& m) {
    write_status(w, m.status, m.message);
    w.u8(static_cast<std::uint8_t>(m.state));
    w.u64(m.generation);
}
void read_body(ByteReader& r, DemoteReply& m) {
    read_status(r, m);
    m.state = read_replica_state(r);
    m.generation = r.u64("generation");
}

void write_body(ByteWriter& w, const RejoinReply& m) {
    write_status(w, m.status, m.message);
    w.bytes(m.replica_uuid);
    w.u8(static_cast<std::uint8_t>(m.state));
    w.u64(m.generation);
}
void read_body(ByteReader& r, RejoinReply& m) {
    read_status(r, m);
    r.bytes(m.replica_uuid, "replica_uuid");
    m.state = read_replica_state(r);
    m.generation = r.u64("generation");
}

void write_body(ByteWriter& w, const AttachReplicaReply& m) {
    write_status(w, m.status, m.message);
    w.bytes(m.poolset_uuid);
    w.bytes(m.primary_uuid);
    w.bytes(m.replica_uuid);
    w.u8(static_cast<std::uint8_t>(m.state));
    w.u64(m.generation);
    w.u8(static_cast<std::uint8_t>((m.promotable ? kRolePromotable : 0) |
                                   (m.in_use ? kRoleInUse : 0)));
}
void read_body(ByteReader& r, AttachReplicaReply& m) {
    read_status(r, m);
    r.bytes(m.poolset_uuid, "poolset_uuid");
    r.bytes(m.primary_uuid, "primary_uuid");
    r.bytes(m.replica_uuid, "replica_uuid");
    m.state = read_replica_state(r);
    m.generation = r.u64("generation");
    auto flags = r.u8("flags");
    r.require((flags & ~(kRolePromotable | kRoleInUse)) == 0, "flags",
              fmt::format("unknown flag bits {:#x}", flags & ~(kRolePromotable | kRoleInUse)));
    m.promotable = (flags & kRolePromotable) != 0;
    m.in_use = (flags & kRoleInUse) != 0;
}

void write_body(ByteWriter&, const Pong&) {}
void read_body(ByteReader&, Pong&) {}

// ---- frames ----------------------------------------------------------------------------------

template <typename Variant>
Result<std::vector<std::uint8_t>> encode_frame(const Variant& message, std::uint32_t request_id) {
    std::vector<std::uint8_t> frame(kFrameHeaderSize);
    ByteWriter writer(frame);
    MessageType type{};
    std::visit(
        [&](const auto& m) {
            type = m.kType;
            write_body(writer, m);
        },
        message);
    if (auto ok = writer.finish(); !ok)
        return fail(std::move(ok.error()).add_context(fmt::format("encoding {}", name_of(type))));

    // The per-type limits are derived from the same field limits the writer enforced, so this
    // only trips if the two disagree: better a local error than a frame the peer refuses.
    std::size_t body_length = frame.size() - kFrameHeaderSize;
    if (body_length > max_body_length(type))
        return fail(EINVAL, fmt::format("encoding {}: body of {} bytes exceeds the limit of {}",
                                        name_of(type), body_length, max_body_length(type)));

    FrameHeader header{kProtocolVersion, type, request_id, static_cast<std::uint32_t>(body_length)};
    auto header_bytes = encode_frame_header(header);
    std::copy(header_bytes.begin(), header_bytes.end(), frame.begin());
    return frame;
}

template <typename Message, typename Variant>
Result<Variant> decode_as(std::span<const std::uint8_t> body) {
    Message message;
    ByteReader reader(body);
    read_body(reader, message);
    if (auto ok = reader.finish(); !ok)
        return fail(
            std::move(ok.error()).add_context(fmt::format("decoding {}", name_of(Message::kType))));
    return Variant(std::move(message));
}

tl::unexpected<Error> bad_message(std::string message) {
    return fail(EPROTO, std::move(message), ErrorSource::protocol,
                static_cast<int>(Status::bad_message));
}

Result<void> check_body(const FrameHeader& header, std::span<const std::uint8_t> body,
                        bool want_request) {
    if (is_request(header.type) != want_request)
        return bad_message(fmt::format("{} received where a {} was expected", name_of(header.type),
                                       want_request ? "request" : "reply"));
    if (body.size() != header.body_length)
        return bad_message(fmt::format("{} body is {} bytes, the header announced {}",
                                       name_of(header.type), body.size(), header.body_length));
    return {};
}

template <typename Message, typename Decode>
Result<DecodedFrame<Message>> decode_frame(std::span<const std::uint8_t> frame, Decode decode) {
    if (frame.size() < kFrameHeaderSize)
        return bad_message(fmt::format("frame of {} bytes is shorter than its {}-byte header",
                                       frame.size(), kFrameHeaderSize));
    auto header = decode_frame_header(frame.first<kFrameHeaderSize>()).result;
    if (!header)
        return fail(std::move(header.error()));
    auto message = decode(*header, frame.subspan(kFrameHeaderSize));
    if (!message)
        return fail(std::move(message.error()));
    return DecodedFrame<Message>{header->request_id, std::move(*message)};
}

} // namespace

Result<std::vector<std::uint8_t>> encode(const Request& request, std::uint32_t request_id) {
    return encode_frame(request, request_id);
}

Result<std::vector<std::uint8_t>> encode(const Reply& reply, std::uint32_t request_id) {
    return encode_frame(reply, request_id);
}

Result<Request> decode_request(const FrameHeader& header, std::span<const std::uint8_t> body) {
    if (auto ok = check_body(header, body, true); !ok)
        return fail(std::move(ok.error()));
    switch (header.type) {
    case MessageType::hello:
        return decode_as<Hello, Request>(body);
    case MessageType::create:
        return decode_as<CreateRequest, Request>(body);
    case MessageType::open:
        return decode_as<OpenRequest, Request>(body);
    case MessageType::close:
        return decode_as<CloseRequest, Request>(body);
    case MessageType::set_attr:
        return decode_as<SetAttrRequest, Request>(body);
    case MessageType::remove:
        return decode_as<RemoveRequest, Request>(body);
    case MessageType::status:
        return decode_as<StatusRequest, Request>(body);
    case MessageType::ping:
        return decode_as<Ping, Request>(body);
    case MessageType::digest:
        return decode_as<DigestRequest, Request>(body);
    case MessageType::events:
        return decode_as<EventsRequest, Request>(body);
    case MessageType::resync_report:
        return decode_as<ResyncReport, Request>(body);
    case MessageType::promote:
        return decode_as<PromoteRequest, Request>(body);
    case MessageType::demote:
        return decode_as<DemoteRequest, Request>(body);
    case MessageType::rejoin:
        return decode_as<RejoinRequest, Request>(body);
    case MessageType::attach_replica:
        return decode_as<AttachReplicaRequest, Request>(body);
    default:
        return bad_message(fmt::format("{} is not a request", name_of(header.type)));
    }
}

Result<Reply> decode_reply(const FrameHeader& header, std::span<const std::uint8_t> body) {
    if (auto ok = check_body(header, body, false); !ok)
        return fail(std::move(ok.error()));
    switch (header.type) {
    case MessageType::hello_reply:
        return decode_as<HelloReply, Reply>(body);
    case MessageType::create_reply:
        return decode_as<CreateReply, Reply>(body);
    case MessageType::open_reply:
        return decode_as<OpenReply, Reply>(body);
    case MessageType::close_reply:
        return decode_as<CloseReply, Reply>(body);
    case MessageType::set_attr_reply:
        return decode_as<SetAttrReply, Reply>(body);
    case MessageType::remove_reply:
        return decode_as<RemoveReply, Reply>(body);
    case MessageType::status_reply:
        return decode_as<StatusReply, Reply>(body);
    case MessageType::pong:
        return decode_as<Pong, Reply>(body);
    case MessageType::error_reply:
        return decode_as<ErrorReply, Reply>(body);
    case MessageType::digest_reply:
        return decode_as<DigestReply, Reply>(body);
    case MessageType::events_reply:
        return decode_as<EventsReply, Reply>(body);
    case MessageType::resync_report_reply:
        return decode_as<ResyncReportReply, Reply>(body);
    case MessageType::promote_reply:
        return decode_as<PromoteReply, Reply>(body);
    case MessageType::demote_reply:
        return decode_as<DemoteReply, Reply>(body);
    case MessageType::rejoin_reply:
        return decode_as<RejoinReply, Reply>(body);
    case MessageType::attach_replica_reply:
        return decode_as<AttachReplicaReply, Reply>(body);
    default:
        return bad_message(fmt::format("{} is not a reply", name_of(header.type)));
    }
}

Result<DecodedFrame<Request>> decode_request_frame(std::span<const std::uint8_t> frame) {
    return decode_frame<Request>(frame, decode_request);
}

Result<DecodedFrame<Reply>> decode_reply_frame(std::span<const std::uint8_t> frame) {
    return decode_frame<Reply>(frame, decode_reply);
}

} // namespace rpmem::protocol
