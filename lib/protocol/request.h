// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "base/pool_attributes.h"
#include "protocol/message_type.h"
#include "protocol/preferences.h"
#include "protocol/version.h"

namespace rpmem::protocol {

// The messages a client sends, as plain values. Each names its wire type in kType; the codec
// (codec.h) is the only place that knows their byte layout.

// The first message on a channel: the protocol versions and capabilities the client supports.
// Its layout, and that of HelloReply, never changes between versions, so that any two peers
// can at least agree that they disagree.
struct Hello {
    static constexpr MessageType kType = MessageType::hello;
    std::uint16_t min_version = kMinProtocolVersion;
    std::uint16_t max_version = kProtocolVersion;
    std::uint64_t capabilities = kCapabilities;
    std::string software; // e.g. "librpmem 0.1.0"; informational

    friend bool operator==(const Hello&, const Hello&) = default;
};

// Create the pool described by the pool set file `pool_set` (relative to the target's pool set
// directory) and open it for this session.
struct CreateRequest {
    static constexpr MessageType kType = MessageType::create;
    std::string pool_set;
    std::uint64_t pool_size = 0; // the initiator's pool size
    std::uint32_t lanes = 0;     // requested; the reply says how many are granted
    ProviderPreference provider = ProviderPreference::any;
    PersistMethod persist_method = PersistMethod::any;
    PoolAttributes attributes; // all zero: the pool has no headers (OPTION NOHDRS)

    friend bool operator==(const CreateRequest&, const CreateRequest&) = default;
};

// Open the existing pool described by `pool_set` for this session.
struct OpenRequest {
    static constexpr MessageType kType = MessageType::open;
    std::string pool_set;
    std::uint64_t pool_size = 0;
    std::uint32_t lanes = 0;
    ProviderPreference provider = ProviderPreference::any;
    PersistMethod persist_method = PersistMethod::any;
    // The generation the initiator last replicated to, when it knows one (a reconnect after a
    // failure); 0: any. A replica at another generation is refused (split_brain).
    std::uint64_t expected_generation = 0;

    friend bool operator==(const OpenRequest&, const OpenRequest&) = default;
};

// Close this session's pool; `remove` deletes it when it was created in this session
// (PMDK's RPMEM_CLOSE_FLAGS_REMOVE). The replica's state afterwards is the initiator's word:
// `in_sync`: it holds every persist and missed nothing before (consistent); `untouched`: the
// session wrote nothing (the state it was opened in); neither: it is behind (outdated).
struct CloseRequest {
    static constexpr MessageType kType = MessageType::close;
    bool remove = false;
    bool in_sync = false;
    bool untouched = false;

    friend bool operator==(const CloseRequest&, const CloseRequest&) = default;
};

// Rewrite the pool attributes in the headers of this session's pool.
struct SetAttrRequest {
    static constexpr MessageType kType = MessageType::set_attr;
    PoolAttributes attributes;

    friend bool operator==(const SetAttrRequest&, const SetAttrRequest&) = default;
};

// Remove the pool described by `pool_set` without opening it (PMDK's `rpmemd --remove`).
struct RemoveRequest {
    static constexpr MessageType kType = MessageType::remove;
    std::string pool_set;
    bool force = false;           // RPMEM_REMOVE_FORCE: ignore errors on missing parts
    bool remove_set_file = false; // RPMEM_REMOVE_POOL_SET: delete the pool set file too

    friend bool operator==(const RemoveRequest&, const RemoveRequest&) = default;
};

// Ask the daemon how it is doing, and about its sessions from the `first_session`th on (the
// reply lists at most kMaxStatusSessions; rpmemctl asks again for the rest).
struct StatusRequest {
    static constexpr MessageType kType = MessageType::status;
    std::uint32_t first_session = 0;

    friend bool operator==(const StatusRequest&, const StatusRequest&) = default;
};

// The daemon's events after `after_sequence` (0: from the oldest it still keeps), at most
// kMaxEventsPerReply of them; rpmemctl events asks again with the last sequence it got.
struct EventsRequest {
    static constexpr MessageType kType = MessageType::events;
    std::uint64_t after_sequence = 0;

    friend bool operator==(const EventsRequest&, const EventsRequest&) = default;
};

// How far the initiator got bringing this session's replica up to date (consistency on open,
// a resync after a reconnect), so that rpmemd's status, events and metrics can show it. Sent
// on the session that has the pool open: started, then progress at intervals, then finished or
// failed. Informational: the replica's recorded state is decided by open and close alone.
enum class ResyncPhase : std::uint8_t {
    started = 1,
    progress = 2,
    finished = 3,
    failed = 4,
};
std::optional<ResyncPhase> resync_phase_from_wire(std::uint8_t value) noexcept;
std::string_view name_of(ResyncPhase phase) noexcept;

struct ResyncReport {
    static constexpr MessageType kType = MessageType::resync_report;
    ResyncPhase phase = ResyncPhase::started;
    std::uint64_t done_bytes = 0;
    std::uint64_t total_bytes = 0; // done_bytes <= total_bytes

    friend bool operator==(const ResyncReport&, const ResyncReport&) = default;
};

// Heartbeat; answered with Pong at any time, also while another request is being served.
struct Ping {
    static constexpr MessageType kType = MessageType::ping;

    friend bool operator==(const Ping&, const Ping&) = default;
};

// Digests of [offset, offset + length) of this session's open pool: one XXH3-64 (seed 0) per
// extent of `extent_size` bytes, the last extent possibly shorter. The codec refuses a request
// whose shape breaks the limits (check_digest_request); the daemon checks the range against
// the pool.
struct DigestRequest {
    static constexpr MessageType kType = MessageType::digest;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::uint32_t extent_size = 0;

    friend bool operator==(const DigestRequest&, const DigestRequest&) = default;
};

// Failover (admin-client only). Make the replica `pool_set` a primary: refused unless it is
// consistent, or with `force` (what may be lost is logged and told). The daemon ends any session
// that has the set open and waits until its data plane stopped, moves the generation on, records
// `promoted` and rewrites the pool headers so that the set opens locally as a pool of its own.
struct PromoteRequest {
    static constexpr MessageType kType = MessageType::promote;
    std::string pool_set;
    bool force = false;

    friend bool operator==(const PromoteRequest&, const PromoteRequest&) = default;
};

// Undo a promote that nothing used since (the pool's data digest is unchanged): the headers,
// state and generation return to what they were. `generation`: the promoted generation the
// operator means (0: whichever).
struct DemoteRequest {
    static constexpr MessageType kType = MessageType::demote;
    std::string pool_set;
    std::uint64_t generation = 0;

    friend bool operator==(const DemoteRequest&, const DemoteRequest&) = default;
};

using Uuid = PoolAttributes::Uuid;

// Turn the old primary's pool `pool_set` (served by the rpmemd on the old primary's host) into a
// replica of the new primary: its headers must name `poolset_uuid` and link to `primary_uuid`
// (the new primary's part 0); it is recorded `outdated` at `generation`, so that the new
// primary's next open brings it up to date by digest resync.
struct RejoinRequest {
    static constexpr MessageType kType = MessageType::rejoin;
    std::string pool_set;
    std::uint64_t generation = 0; // the new primary's, at least 1
    Uuid poolset_uuid{};
    Uuid primary_uuid{};

    friend bool operator==(const RejoinRequest&, const RejoinRequest&) = default;
};

// On the new primary's rpmemd: link the promoted set `pool_set` to the replica whose part 0 is
// `replica_uuid` (its headers' replica links), so that its pool set file with a REPLICA line to
// that replica opens; a zero `replica_uuid` only reports the set's identity.
struct AttachReplicaRequest {
    static constexpr MessageType kType = MessageType::attach_replica;
    std::string pool_set;
    Uuid replica_uuid{};

    friend bool operator==(const AttachReplicaRequest&, const AttachReplicaRequest&) = default;
};

using Request =
    std::variant<Hello, CreateRequest, OpenRequest, CloseRequest, SetAttrRequest, RemoveRequest,
                 StatusRequest, Ping, DigestRequest, EventsRequest, ResyncReport, PromoteRequest,
                 DemoteRequest, RejoinRequest, AttachReplicaRequest>;

MessageType type_of(const Request& request) noexcept;

// A field of a message that breaks a rule, and why; for "field: reason" messages.
struct FieldProblem {
    std::string_view field;
    std::string reason;
};

// What is wrong with `extent_size` (not a power of two in [kMinDigestExtentSize,
// kMaxDigestExtentSize]), or nothing.
std::optional<FieldProblem> check_digest_extent_size(std::uint64_t extent_size);

// The most bytes one DigestRequest with a valid `extent_size` may cover: a multiple of it, so
// that consecutive requests keep the extents of one long range aligned.
std::uint64_t digest_request_span(std::uint32_t extent_size) noexcept;

// What breaks the limits of message_limits.h in `request`, or nothing: extent_size a power of
// two in [kMinDigestExtentSize, kMaxDigestExtentSize]; length from 1 to kMaxDigestRangeLength
// and at most kMaxDigestExtents extents; offset + length not overflowing. Encoder and decoder
// both apply it.
std::optional<FieldProblem> check_digest_request(const DigestRequest& request);

} // namespace rpmem::protocol
