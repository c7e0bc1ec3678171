// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "base/error.h"
#include "channel/server.h"
#include "rpmemd/boundary/data_plane.h"
#include "rpmemd/supervisor/config.h"
#include "rpmemd/supervisor/daemon_session.h"
#include "rpmemd/supervisor/event_log.h"
#include "rpmemd/supervisor/metrics_server.h"
#include "rpmemd/supervisor/pool_store.h"
#include "rpmemd/supervisor/session_directory.h"

namespace rpmem::daemon {

// The serving daemon: the pool store, the TLS control server on the config's listen address
// (allow-client as the identity check, max-sessions, heartbeat), and a DaemonSession per client
// whose data planes come from the given factory (start_fabric_target in rpmemd). main() makes
// one; tests may make one in-process with another factory.
//
// Members are declared parent before child: the server, destroyed first, ends every session
// (each session's on_close fences its data plane and releases its pool) before the store and
// the config go. Thread-safe: start, port and stop may be called from any thread.
class Daemon {
public:
    // `worker_count` (optional) tells status and metrics how many worker processes run.
    static Result<std::unique_ptr<Daemon>> start(Config config, DataPlaneFactory data_plane,
                                                 std::function<std::size_t()> worker_count = {});

    ~Daemon();
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    // The TCP port the control server listens on (the bound one when the config said 0).
    std::uint16_t port() const noexcept;
    // The port /metrics is served on (the bound one for metrics-listen HOST:0); 0: none.
    std::uint16_t metrics_port() const noexcept;

    // Stops accepting and ends every session; returns once every pool is released. Idempotent.
    void stop();

private:
    Daemon(Config config, DataPlaneFactory data_plane, std::function<std::size_t()> worker_count);
    // What /metrics shows, rendered at each scrape.
    std::string render_metrics() const;

    const Config config_;
    PoolStore store_;
    SessionDirectory directory_;
    EventLog events_;
    SessionServices services_;
    std::unique_ptr<MetricsServer> metrics_; // reads the above; stopped before them
    std::unique_ptr<channel::Server> server_;
    std::atomic<const channel::Server*> serving_{nullptr}; // server_, for the sessions
};

// The listen host as an IP address for the server: wildcards and addresses as they are, a
// host name resolved (its first address). EINVAL naming the host when it does not resolve.
Result<std::string> listen_address(const std::string& host);

} // namespace rpmem::daemon
