// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "protocol/preferences.h"

namespace rpmem::client {

// What a failed replica does to the application (RPMEM_ON_REPLICA_FAILURE, on-replica-failure).
enum class FailurePolicy {
    error,             // PMDK's: the call fails, errors are sticky (libpmemobj: a clean abort)
    abort,             // log the reason, naming the target and the step, and abort
    continue_degraded, // "continue": the replica goes degraded, resyncs when it is back
};

// How persists reach a replica (RPMEM_REPLICATION, replication).
enum class Replication {
    sync,  // a persist returns once the replica acknowledged it
    async, // once it is queued, in order (client/ordered_stream.h): the replica is always a
           // prefix of the persists, at most max_lag bytes and max_lag_time behind
};

// Everything the client side is configured with. Read once, at the edge (the C ABI's first
// call, a tool's main), from the environment and an optional client config file; passed down
// by value afterwards. Nothing deeper calls getenv.
struct Settings {
    // Mutual TLS credentials: RPMEM_TLS_CA, RPMEM_TLS_CERT, RPMEM_TLS_KEY.
    std::string tls_ca;
    std::string tls_cert;
    std::string tls_key;

    // RPMEM_PROVIDER: "tcp", "sockets", "verbs"; empty lets the daemon pick (verbs first, then
    // tcp; sockets only when RPMEM_ENABLE_SOCKETS=1, as in PMDK).
    std::string provider;
    bool enable_sockets = false; // RPMEM_ENABLE_SOCKETS=1
    bool enable_verbs = true;    // RPMEM_ENABLE_VERBS=0 disables it
    // RPMEM_PERSIST_METHOD: a preference the daemon honours when valid there; any: none.
    protocol::PersistMethod method = protocol::PersistMethod::any;

    unsigned max_lanes = 0;        // RPMEM_MAX_NLANES; 0: no client-side cap
    unsigned work_queue_size = 50; // RPMEM_WORK_QUEUE_SIZE: outstanding writes per lane

    std::chrono::milliseconds connect_timeout{10000}; // RPMEM_CONNECT_TIMEOUT (ms)
    std::chrono::milliseconds timeout{10000};         // RPMEM_TIMEOUT (ms): any one operation
    std::chrono::microseconds spin{1000};             // RPMEM_SPIN_US: busy-poll before blocking

    FailurePolicy on_replica_failure = FailurePolicy::error; // RPMEM_ON_REPLICA_FAILURE
    // RPMEM_MIN_IN_SYNC_REPLICAS: how many replicas of one local pool must stay in sync for a
    // failed one to go degraded without the failure policy (client/sync_quorum.h); 0: "all".
    unsigned min_in_sync_replicas = 0;
    // RPMEM_FAN_OUT: a persist on one replica also posts it to its siblings, whose own calls
    // then only wait (client/sibling_group.h); 0 persists to each replica in its own call.
    bool fan_out = true;

    Replication replication = Replication::sync; // RPMEM_REPLICATION: sync or async
    // Async only: how far the replica may fall behind before a persist waits (back-pressure).
    std::uint64_t max_lag = 8ULL << 20;           // RPMEM_MAX_LAG: queued bytes (K, M, G suffixes)
    std::chrono::milliseconds max_lag_time{1000}; // RPMEM_MAX_LAG_TIME: age of the oldest

    // Where librpmem's log goes (client/logger.h): the system log at info by default; stderr
    // when only a level is given; a file when one is named.
    std::optional<std::string> log_level; // RPMEM_LOG_LEVEL: off, error, warn, info, debug, trace
    std::string log_file;                 // RPMEM_LOG_FILE
    // RPMEM_USAGE_FILE: each replica appends what its session carried when it closes
    // (client/session_usage.h), one JSON record a line.
    std::string usage_file;
};

// Looks up one environment variable (std::getenv in production, a map in tests).
using Environment = std::function<std::optional<std::string>(std::string_view name)>;

// The process environment, for the edges that read it.
Environment process_environment();

// Builds the settings: a client config file first (RPMEM_CONFIG, else ~/.config/rpmem/client.conf,
// else /etc/rpmem/client.conf; `key = value` lines with the variable names in lower case without
// the RPMEM_ prefix, e.g. `tls-ca = /etc/rpmem/ca.crt`), then the environment, which wins. Bad
// values are errors naming the variable or the file and line.
Result<Settings> load_settings(const Environment& environment);

} // namespace rpmem::client
