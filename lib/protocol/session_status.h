// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <string>

#include "protocol/preferences.h"
#include "protocol/replica_state.h"

namespace rpmem::protocol {

// One session as rpmemd sees it, for StatusReply (rpmemctl status). A plain value; the codec
// (codec.cpp) writes it field by field. Fields a session does not have yet (no pool open, no
// resync reported) are zero or empty.
struct SessionStatus {
    std::uint64_t id = 0;           // the daemon's session id, as in its log lines
    std::string identity;           // the client certificate's identity
    std::string peer;               // "address:port" of the control channel
    std::uint64_t connected_ms = 0; // how long the session has been open
    std::string pool_set;           // empty: no pool open
    std::string provider;           // libfabric provider of the data path
    PersistMethod persist_method = PersistMethod::any; // any: no data path
    std::string method_reason;                         // why rpmemd chose that method
    std::uint32_t lanes = 0;
    ReplicaState state = ReplicaState::inconsistent; // meaningful with a pool set only
    std::uint64_t generation = 0;                    // 0: no pool open
    // What the data path served (the target's view: inline persists, flushes, reads of
    // messages; one-sided RMA writes are not seen by the target until a flush names them).
    std::uint64_t persists = 0;
    std::uint64_t persisted_bytes = 0;
    std::uint64_t latency_p50_ns = 0; // service time of a persist message at the target
    std::uint64_t latency_p99_ns = 0;
    // The initiator's resync of this replica, as it reports it (ResyncReport); all zero: none.
    bool resync_active = false;
    std::uint64_t resync_done_bytes = 0;
    std::uint64_t resync_total_bytes = 0;
    // Asynchronous replication (DataPathCounters): messages of ordered records served, the
    // initiator's queued bytes behind the last one, and the most of those; all zero: none.
    std::uint64_t ordered_messages = 0;
    std::uint64_t lag_bytes = 0;
    std::uint64_t max_lag_bytes = 0;

    friend bool operator==(const SessionStatus&, const SessionStatus&) = default;
};

} // namespace rpmem::protocol
