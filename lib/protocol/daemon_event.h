// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/replica_state.h"

namespace rpmem::protocol {

// What happened, in a DaemonEvent. Wire values are u16; new kinds get new values.
enum class EventKind : std::uint16_t {
    session_opened = 1,  // a client's session began (after TLS and Hello)
    session_closed = 2,  // it ended cleanly (close, or the client hung up with no pool open)
    session_lost = 3,    // it ended with its pool open: lost channel, heartbeat, worker death
    state_changed = 4,   // a replica's recorded state or generation changed
    resync_started = 5,  // an initiator began bringing this replica up to date
    resync_progress = 6, // ... and reported how far it got
    resync_finished = 7, // ... and finished (reason empty) or gave up (reason says why)
    refused = 8,         // a connection or request was turned away; reason says why
};

std::optional<EventKind> event_kind_from_wire(std::uint16_t value) noexcept;
// "session_opened", ...: the names rpmemctl events prints.
std::string_view name_of(EventKind kind) noexcept;

// One entry of rpmemd's event log (rpmemctl events): numbered in the order they happened,
// with the wall-clock time, the session and pool set they concern, and what the kind needs.
// Fields a kind does not use are zero or empty.
struct DaemonEvent {
    std::uint64_t sequence = 0;     // 1, 2, ... per daemon run
    std::uint64_t unix_time_ms = 0; // when it happened
    EventKind kind = EventKind::session_opened;
    std::uint64_t session_id = 0; // 0: no session (a refusal before one began)
    std::string identity;
    std::string peer;
    std::string pool_set;
    bool has_state = false; // state and generation below are set
    ReplicaState state = ReplicaState::inconsistent;
    std::uint64_t generation = 0;
    std::uint64_t done_bytes = 0; // resync_*
    std::uint64_t total_bytes = 0;
    std::string reason; // session_lost, refused, resync_finished (failed), state_changed (why)

    friend bool operator==(const DaemonEvent&, const DaemonEvent&) = default;
};

} // namespace rpmem::protocol
