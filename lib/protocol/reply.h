// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/pool_attributes.h"
#include "protocol/daemon_event.h"
#include "protocol/data_path.h"
#include "protocol/message_type.h"
#include "protocol/preferences.h"
#include "protocol/replica_state.h"
#include "protocol/session_status.h"
#include "protocol/status.h"

namespace rpmem::protocol {

// The messages a server sends, as plain values. Every reply carries a Status and a
// human-readable message (empty or a note on success, the reason on failure). The other fields
// of a failed reply are zero and mean nothing.

// The answer to Hello. Like Hello, its layout never changes between versions.
struct HelloReply {
    static constexpr MessageType kType = MessageType::hello_reply;
    Status status = Status::ok;
    std::string message;
    std::uint16_t version = 0;              // the version both sides speak from now on
    std::uint64_t capabilities = 0;         // shared by both sides
    std::string software;                   // e.g. "rpmemd 0.1.0"; informational
    std::uint64_t session_id = 0;           // the server's name for this session in its logs
    std::uint32_t heartbeat_timeout_ms = 0; // a client silent this long is dropped
    std::string identity; // the client identity the server took from the client's certificate

    friend bool operator==(const HelloReply&, const HelloReply&) = default;
};

struct CreateReply {
    static constexpr MessageType kType = MessageType::create_reply;
    Status status = Status::ok;
    std::string message; // on success, e.g. why this persistence method was chosen
    DataPath data_path;
    std::uint64_t generation = 0; // of the new replica

    friend bool operator==(const CreateReply&, const CreateReply&) = default;
};

struct OpenReply {
    static constexpr MessageType kType = MessageType::open_reply;
    Status status = Status::ok;
    std::string message;
    DataPath data_path;
    PoolAttributes attributes; // as stored in the pool's headers; zero for NOHDRS
    // The replica as this session found it: anything but consistent means the initiator must
    // bring it up to date before trusting it (it is inconsistent from now until a clean close).
    ReplicaState state = ReplicaState::inconsistent;
    std::uint64_t generation = 0;

    friend bool operator==(const OpenReply&, const OpenReply&) = default;
};

struct CloseReply {
    static constexpr MessageType kType = MessageType::close_reply;
    Status status = Status::ok;
    std::string message;

    friend bool operator==(const CloseReply&, const CloseReply&) = default;
};

struct SetAttrReply {
    static constexpr MessageType kType = MessageType::set_attr_reply;
    Status status = Status::ok;
    std::string message;

    friend bool operator==(const SetAttrReply&, const SetAttrReply&) = default;
};

struct RemoveReply {
    static constexpr MessageType kType = MessageType::remove_reply;
    Status status = Status::ok;
    std::string message;

    friend bool operator==(const RemoveReply&, const RemoveReply&) = default;
};

// The daemon as a whole, then a page of the sessions the asking client may see: every session
// for an identity the daemon's admin-client list names, else that identity's own.
struct StatusReply {
    static constexpr MessageType kType = MessageType::status_reply;
    Status status = Status::ok;
    std::string message;
    std::string software;
    std::uint16_t protocol_version = 0;
    std::uint64_t uptime_seconds = 0;
    std::uint32_t sessions = 0;     // open control channels, of every identity
    std::uint32_t pools_in_use = 0; // of every identity
    std::uint32_t max_sessions = 0;
    std::uint32_t max_sessions_per_client = 0;
    std::uint32_t pending_connections = 0; // accepted, not yet through TLS and Hello
    std::uint32_t max_pending_connections = 0;
    std::uint32_t workers = 0;          // data-path worker processes running
    bool all_identities = false;        // the list covers every identity, not only the caller's
    std::uint32_t visible_sessions = 0; // the sessions the caller may see, in all pages
    std::uint32_t first_session = 0;    // the index of session_list[0] among them
    std::vector<SessionStatus> session_list; // at most kMaxStatusSessions

    friend bool operator==(const StatusReply&, const StatusReply&) = default;
};

// The answer to EventsRequest: events in sequence order (at most kMaxEventsPerReply), and the
// range the daemon still keeps (it keeps the newest kEventLogCapacity), so that a reader
// notices what it missed: `oldest_sequence` above the one it asked after means events were
// dropped in between.
struct EventsReply {
    static constexpr MessageType kType = MessageType::events_reply;
    Status status = Status::ok;
    std::string message;
    std::uint64_t oldest_sequence = 0; // 0: no event yet
    std::uint64_t newest_sequence = 0;
    std::vector<DaemonEvent> events;

    friend bool operator==(const EventsReply&, const EventsReply&) = default;
};

struct ResyncReportReply {
    static constexpr MessageType kType = MessageType::resync_report_reply;
    Status status = Status::ok;
    std::string message;

    friend bool operator==(const ResyncReportReply&, const ResyncReportReply&) = default;
};

struct Pong {
    static constexpr MessageType kType = MessageType::pong;

    friend bool operator==(const Pong&, const Pong&) = default;
};

// The answer to a frame the server could not take: bad framing, a version it does not speak,
// an unknown type, a reply where a request belongs, a malformed body.
struct ErrorReply {
    static constexpr MessageType kType = MessageType::error_reply;
    Status status = Status::bad_message;
    std::string message;

    friend bool operator==(const ErrorReply&, const ErrorReply&) = default;
};

// The answer to DigestRequest: on success one digest per extent of the requested range, in
// order; empty on failure.
struct DigestReply {
    static constexpr MessageType kType = MessageType::digest_reply;
    Status status = Status::ok;
    std::string message;
    std::vector<std::uint64_t> digests; // at most kMaxDigestExtents

    friend bool operator==(const DigestReply&, const DigestReply&) = default;
};

struct PromoteReply {
    static constexpr MessageType kType = MessageType::promote_reply;
    Status status = Status::ok;
    std::string message; // on success with force: what may have been lost
    ReplicaState previous_state = ReplicaState::inconsistent;
    std::uint64_t previous_generation = 0;
    std::uint64_t generation = 0;     // the new one
    std::uint32_t sessions_ended = 0; // sessions that had the set open and were ended

    friend bool operator==(const PromoteReply&, const PromoteReply&) = default;
};

struct DemoteReply {
    static constexpr MessageType kType = MessageType::demote_reply;
    Status status = Status::ok;
    std::string message;
    ReplicaState state = ReplicaState::inconsistent; // restored
    std::uint64_t generation = 0;                    // restored

    friend bool operator==(const DemoteReply&, const DemoteReply&) = default;
};

struct RejoinReply {
    static constexpr MessageType kType = MessageType::rejoin_reply;
    Status status = Status::ok;
    std::string message;
    PoolAttributes::Uuid replica_uuid{}; // the rejoined pool's part 0
    ReplicaState state = ReplicaState::outdated;
    std::uint64_t generation = 0;

    friend bool operator==(const RejoinReply&, const RejoinReply&) = default;
};

struct AttachReplicaReply {
    static constexpr MessageType kType = MessageType::attach_replica_reply;
    Status status = Status::ok;
    std::string message;
    PoolAttributes::Uuid poolset_uuid{};
    PoolAttributes::Uuid primary_uuid{}; // the set's own part 0
    PoolAttributes::Uuid replica_uuid{}; // what its replica links name now
    ReplicaState state = ReplicaState::promoted;
    std::uint64_t generation = 0;
    bool promotable = false; // a promote without force would be accepted now (state-wise)
    bool in_use = false;     // a session or a local program has the set open; UUIDs are zero

    friend bool operator==(const AttachReplicaReply&, const AttachReplicaReply&) = default;
};

using Reply =
    std::variant<HelloReply, CreateReply, OpenReply, CloseReply, SetAttrReply, RemoveReply,
                 StatusReply, Pong, ErrorReply, DigestReply, EventsReply, ResyncReportReply,
                 PromoteReply, DemoteReply, RejoinReply, AttachReplicaReply>;

MessageType type_of(const Reply& reply) noexcept;

// The status and message of any reply (Pong counts as ok).
Status reply_status(const Reply& reply) noexcept;
const std::string& reply_message(const Reply& reply) noexcept;

// A failed reply of the type that answers `request` (ErrorReply for a Ping or an unknown
// request), for servers turning an error into an answer.
Reply failure_reply(MessageType request, Status status, std::string message);

} // namespace rpmem::protocol
