// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/daemon.h"

#include <algorithm>
#include <array>
#include <cerrno>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <spdlog/spdlog.h>

#include "base/log_text.h"
#include "protocol/message_limits.h"
#include "rpmemd/supervisor/local_address.h"
#include "rpmemd/supervisor/metrics_text.h"

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "unknown"
#endif

namespace rpmem::daemon {

Result<std::string> listen_address(const std::string& host) {
    if (is_wildcard_address(host))
        return std::string(host.find(':') != std::string::npos ? "::" : "0.0.0.0");
    std::array<unsigned char, sizeof(in6_addr)> ignored{};
    if (::inet_pton(AF_INET, host.c_str(), ignored.data()) == 1 ||
        ::inet_pton(AF_INET6, host.c_str(), ignored.data()) == 1)
        return host;
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_ADDRCONFIG;
    addrinfo* found = nullptr;
    int error = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (error != 0 || found == nullptr)
        return fail(EINVAL, fmt::format("listen address '{}' does not resolve: {}", host,
                                        ::gai_strerror(error)));
    std::array<char, NI_MAXHOST> text{};
    error = ::getnameinfo(found->ai_addr, found->ai_addrlen, text.data(), text.size(), nullptr, 0,
                          NI_NUMERICHOST);
    ::freeaddrinfo(found);
    if (error != 0)
        return fail(EINVAL, fmt::format("listen address '{}': {}", host, ::gai_strerror(error)));
    return std::string(text.data());
}

Daemon::Daemon(Config config, DataPlaneFactory data_plane,
               std::function<std::size_t()> worker_count)
    : config_(std::move(config))
    , store_(config_.poolset_dir, config_.client_poolset_dirs, default_resolve_method(),
             config_.tenancy)
    , events_(protocol::kEventLogCapacity)
    , services_{config_, store_, std::move(data_plane), directory_, events_} {
    services_.software = "rpmemd " RPMEM_VERSION;
    // Sessions may ask before start() has stored the server: read it through the atomic.
    services_.session_count = [this]() -> std::size_t {
        const channel::Server* server = serving_.load(std::memory_order_acquire);
        return server != nullptr ? server->session_count() : 0;
    };
    services_.pending_count = [this]() -> std::size_t {
        const channel::Server* server = serving_.load(std::memory_order_acquire);
        return server != nullptr ? server->pending_count() : 0;
    };
    services_.worker_count = std::move(worker_count);
}

Daemon::~Daemon() {
    stop();
}

Result<std::unique_ptr<Daemon>> Daemon::start(Config config, DataPlaneFactory data_plane,
                                              std::function<std::size_t()> worker_count) {
    if (!data_plane)
        return fail(EINVAL, "starting rpmemd: no data plane factory");
    auto address = listen_address(config.listen_host);
    if (!address)
        return fail(std::move(address.error()));

    std::unique_ptr<Daemon> daemon(
        new Daemon(std::move(config), std::move(data_plane), std::move(worker_count)));
    const Config& cfg = daemon->config_;

    channel::ServerConfig server;
    server.address = *address;
    server.port = cfg.listen_port;
    server.tls = {cfg.tls_ca, cfg.tls_cert, cfg.tls_key};
    server.handshake_timeout = cfg.session_timeout;
    server.heartbeat_timeout = cfg.heartbeat;
    server.max_sessions = cfg.max_sessions;
    server.max_sessions_per_client = effective_max_sessions_per_client(cfg);
    server.max_pending = cfg.max_pending_connections;
    server.max_pending_per_source = cfg.max_pending_per_source;
    server.software = daemon->services_.software;
    if (!cfg.allowed_clients.empty()) {
        server.check_identity = [&cfg](const channel::PeerInfo& peer) -> Result<void> {
            const auto& allowed = cfg.allowed_clients;
            if (std::find(allowed.begin(), allowed.end(), peer.identity) != allowed.end())
                return {};
            return fail(EPERM, "it is not in rpmemd's allow-client list");
        };
    }
    // Refusals are logged by the channel itself, escaped and rate-limited (a flood of them
    // costs a summary line per interval); the event log keeps the newest of them.
    server.on_refusal = [events = &daemon->events_](const channel::Refusal& refusal) {
        protocol::DaemonEvent event;
        event.kind = protocol::EventKind::refused;
        event.identity = escape_for_log(refusal.identity, protocol::kMaxIdentityLength - 32);
        event.peer = escape_for_log(refusal.peer, protocol::kMaxPeerLength - 32);
        event.reason = escape_for_log(refusal.reason.message(), protocol::kMaxMessageLength - 32);
        events->record(std::move(event));
    };

    auto started =
        channel::Server::start(std::move(server), make_session_factory(daemon->services_));
    if (!started)
        return fail(std::move(started.error()).add_context("starting rpmemd"));
    daemon->server_ = std::move(*started);
    daemon->serving_.store(daemon->server_.get(), std::memory_order_release);
    if (cfg.metrics_port) {
        auto metrics = MetricsServer::start(cfg.metrics_host, *cfg.metrics_port,
                                            [d = daemon.get()] { return d->render_metrics(); });
        if (!metrics)
            return fail(std::move(metrics.error()).add_context("starting rpmemd's metrics"));
        daemon->metrics_ = std::move(*metrics);
        spdlog::info("metrics at http://{}:{}/metrics", cfg.metrics_host, daemon->metrics_->port());
    }
    spdlog::info("rpmemd {} serving pool sets beneath {} on {} port {} ({} lanes, {} sessions at "
                 "most)",
                 RPMEM_VERSION, cfg.poolset_dir, *address, daemon->server_->port(), cfg.max_lanes,
                 cfg.max_sessions);
    spdlog::info("platform: {}, persistence domain {}, NIC writes {}bypass the CPU caches",
                 cfg.platform.type.empty() ? std::string("(platform-type not set)")
                                           : escape_for_log(cfg.platform.type),
                 cfg.platform.domain == persist::PersistenceDomain::eadr ? "eADR" : "ADR",
                 cfg.platform.nic_writes_bypass_cache ? "" : "do not ");
    return daemon;
}

std::uint16_t Daemon::port() const noexcept {
    return server_ ? server_->port() : 0;
}

std::string Daemon::render_metrics() const {
    MetricsSnapshot snapshot;
    snapshot.version = RPMEM_VERSION;
    snapshot.uptime_seconds =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::steady_clock::now() - services_.started)
                                       .count());
    auto count = [](const std::function<std::size_t()>& counter) -> std::uint64_t {
        return counter ? counter() : 0;
    };
    snapshot.sessions = count(services_.session_count);
    snapshot.max_sessions = config_.max_sessions;
    snapshot.pending_connections = count(services_.pending_count);
    snapshot.max_pending_connections = config_.max_pending_connections;
    snapshot.workers = count(services_.worker_count);
    snapshot.pools_in_use = store_.pools_in_use().size();
    auto sessions = directory_.snapshot();
    snapshot.session_list = std::move(sessions.sessions);
    snapshot.totals = sessions.totals;
    snapshot.events_total = events_.totals();
    return daemon::render_metrics(snapshot);
}

std::uint16_t Daemon::metrics_port() const noexcept {
    return metrics_ ? metrics_->port() : 0;
}

void Daemon::stop() {
    if (metrics_)
        metrics_->stop();
    if (server_)
        server_->stop();
}

} // namespace rpmem::daemon
