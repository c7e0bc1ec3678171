// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "persist/method_choice.h"
#include "poolset/pool_mapping.h"
#include "protocol/preferences.h"
#include "protocol/reply.h"
#include "rpmemd/boundary/shared_counter_page.h"

namespace rpmem::daemon {

// What a session asks of the data plane once its pool is mapped.
struct DataPlaneRequest {
    // The client's wish and the operator's allow list (empty: any provider found).
    protocol::ProviderPreference provider = protocol::ProviderPreference::any;
    std::vector<std::string> allowed_providers;
    // Local address the fabric listener binds: the config's fabric-address, else the address
    // the TLS session arrived on.
    std::string bind_host;
    // The session's pool; outlives the data plane.
    poolset::PoolMapping* pool = nullptr;
    // Bytes at the start of the pool (4096 with headers: the pool header) that no lane may
    // reach: neither registered for RMA nor written by inline persists.
    std::size_t protected_prefix = 0;
    // The client identity whose trust domain serves this session (one worker per identity).
    std::string identity;
    // Called at most once, from any thread, when the data plane ends by itself (its worker
    // died): the session should end, as its lanes are gone. Not called after stop().
    std::function<void(const Error&)> on_lost;
    unsigned lanes = 1; // lanes to grant at most (already capped by the config)
    protocol::SessionToken token{};
    std::string session_name; // for log lines, e.g. "session 7"
    // How the responders wait: busy-poll at most this long after a completion before they
    // block, less while completions come later (nanoseconds::max(): never block), and the CPU
    // they are pinned to (-1: none). A worker's responders take these from its first session.
    std::chrono::nanoseconds responder_spin = std::chrono::microseconds(1000);
    int responder_cpu = -1;
    // rpmemd's inject-reply-delay: every lane reply leaves this long after its message was
    // handled (zero: at once), emulating a longer link. Waited out by a timer, never by the
    // responder thread, which other sessions share.
    std::chrono::nanoseconds reply_delay{0};
    // Where the data plane counts the persist messages it serves, for status and /metrics
    // (null: not counted). Shared with the worker that serves the session; outlives the data
    // plane.
    std::shared_ptr<SharedCounterPage> counters;
};

// What the client needs to reach the data plane, and what the method choice needs to know.
struct DataPlaneInfo {
    // The create/open reply's DataPath but for what the session adds: the persistence method,
    // the pool size and the token. `host` is empty for a wildcard listener (the client dials
    // the host it reached over TLS); `lanes` is what was granted.
    protocol::DataPath path;
    persist::ProviderTraits traits;

    protocol::DataPath data_path(protocol::PersistMethod method, std::uint64_t pool_size,
                                 const protocol::SessionToken& token) const {
        protocol::DataPath completed = path;
        completed.persist_method = method;
        completed.pool_size = pool_size;
        completed.token = token;
        return completed;
    }
};

// The fabric half of one session on the target: a listener that admits only connections
// carrying the session's token, one endpoint per lane, the pool registered for remote access,
// and the responders that serve the lanes' persist messages (copy with 8-byte stores, flush,
// reply) and keep the provider progressing. Owned by the session; stop() (or destruction)
// fences it: afterwards no connection of this session can read or write the pool.
class DataPlane {
public:
    virtual ~DataPlane() = default;
    virtual const DataPlaneInfo& info() const noexcept = 0;
    // Idempotent; returns once every lane is disconnected and no responder touches the pool.
    virtual void stop() noexcept = 0;
};

// Starts the data plane of a session (the real one is FabricTarget; tests may pass another).
using DataPlaneFactory = std::function<Result<std::unique_ptr<DataPlane>>(const DataPlaneRequest&)>;

} // namespace rpmem::daemon
