// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "channel/session_handler.h"
#include "protocol/reply.h"
#include "protocol/request.h"
#include "rpmemd/boundary/data_plane.h"
#include "rpmemd/supervisor/config.h"
#include "rpmemd/supervisor/event_log.h"
#include "rpmemd/supervisor/pool_store.h"
#include "rpmemd/supervisor/session_directory.h"

namespace rpmem::daemon {

// What every session of one daemon shares. Owned by the daemon, which outlives its sessions.
struct SessionServices {
    const Config& config;
    PoolStore& store;
    DataPlaneFactory start_data_plane;          // start_fabric_target in the daemon
    SessionDirectory& directory;                // status and metrics: every open session
    EventLog& events;                           // rpmemctl events
    std::function<std::size_t()> session_count; // open control channels, for StatusRequest
    std::function<std::size_t()> pending_count; // connections not yet past Hello
    std::function<std::size_t()> worker_count;  // data-path worker processes running
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::string software = "rpmemd"; // told in StatusReply
};

// One client's session on the daemon: the functional core that turns each control request
// into its reply (create/open/close/set_attr/remove/status), with at most one pool at a time.
// After create or open maps the pool it starts the session's data plane (through the
// DataPlaneFactory seam), chooses the persistence method and replies with the data path.
// Whenever the pool goes — close, a lost channel (on_close), a failure half-way — the data
// plane is stopped first (fencing: no lane can touch the pool any more), then the pool is
// unmapped and unlocked, then its reservation released.
//
// Owned by the channel::Server (from the factory's return until after on_close); the server
// calls handle() and on_close() one at a time, so the session needs no lock of its own.
class DaemonSession final : public channel::SessionHandler {
public:
    DaemonSession(const SessionServices& services, channel::PeerInfo peer);
    ~DaemonSession() override;
    DaemonSession(const DaemonSession&) = delete;
    DaemonSession& operator=(const DaemonSession&) = delete;

    protocol::Reply handle(const protocol::Request& request) override;
    void on_close(const Error& reason) noexcept override;
    void on_open(Ender end) override { end_ = std::move(end); }

private:
    protocol::Reply create(const protocol::CreateRequest& request);
    protocol::Reply open(const protocol::OpenRequest& request);
    protocol::Reply close(const protocol::CloseRequest& request);
    protocol::Reply set_attr(const protocol::SetAttrRequest& request);
    protocol::Reply remove(const protocol::RemoveRequest& request);
    protocol::Reply status(const protocol::StatusRequest& request);
    protocol::Reply digest(const protocol::DigestRequest& request);
    protocol::Reply events(const protocol::EventsRequest& request);
    protocol::Reply resync_report(const protocol::ResyncReport& request);
    // Failover (daemon_session_roles.cpp); admin-client only.
    protocol::Reply promote(const protocol::PromoteRequest& request);
    protocol::Reply demote(const protocol::DemoteRequest& request);
    protocol::Reply rejoin(const protocol::RejoinRequest& request);
    protocol::Reply attach_replica(const protocol::AttachReplicaRequest& request);
    // What a promote calls to take this session's pool away: ends this session's channel.
    PoolRegistry::Evict evictor() const;
    // The refusal of a privileged request from an identity not in admin-client, or nothing.
    std::optional<Error> refuse_unless_admin(std::string_view what) const;
    // A state_changed event about the pool set `pool_set` (not this session's pool).
    void record_set_state(std::string_view pool_set, protocol::ReplicaState state,
                          std::uint64_t generation, std::string reason) const;

    // True when this session's identity may see every identity's sessions and events
    // (admin-client); otherwise it sees its own.
    bool sees_everything() const;
    // An event about this session (its id, identity, peer and open pool set filled in).
    protocol::DaemonEvent event_of(protocol::EventKind kind) const;
    // An event about this session, recorded in the daemon's log.
    void record(protocol::EventKind kind, std::string reason = {}) const;
    void record_state(protocol::ReplicaState state, std::uint64_t generation,
                      std::string reason) const;

    // Checks of a create/open that need neither the pool nor the fabric.
    Result<void> check_open_request(std::uint32_t lanes,
                                    protocol::ProviderPreference provider) const;
    // Starts the data plane for `pool` and chooses the persistence method; on success the
    // data plane is this session's. `note` receives the method choice's reason.
    Result<protocol::DataPath> start_data_plane(OpenPool& pool, std::uint32_t lanes,
                                                protocol::ProviderPreference provider,
                                                protocol::PersistMethod method, std::string& note);
    // The common rest of create and open once the store made or opened `pool`: the data plane
    // started, the pool this session's; on failure the pool closed again (removed when this
    // request `created` it).
    Result<protocol::DataPath> serve_pool(Result<std::unique_ptr<OpenPool>> pool,
                                          std::uint32_t lanes,
                                          protocol::ProviderPreference provider,
                                          protocol::PersistMethod method, bool created,
                                          std::string& note);
    // A refused create or open, logged; its status comes from the error (pool_config if none).
    protocol::Reply refusal(protocol::MessageType type, std::string_view pool_set,
                            const Error& error) const;
    // Fences and closes this session's pool (data plane first); `remove` deletes its parts;
    // `verdict` decides the replica state it leaves (lost: inconsistent, as on a lost channel).
    Result<void> release(bool remove, CloseVerdict verdict = CloseVerdict::lost) noexcept;
    std::string bind_host() const;

    const SessionServices& services_;
    const channel::PeerInfo peer_;
    const std::string log_name_;
    Ender end_;                         // ends the channel when the data plane is lost
    SessionDirectory::Listing listing_; // this session's row in status
    std::chrono::steady_clock::time_point last_progress_event_{}; // resync_progress rate limit
    // The open pool's copy holds every persist so far: the session created it or found it
    // consistent (the initiator resyncs anything else); a loss then keeps that in the state.
    bool in_sync_ = false;
    std::unique_ptr<OpenPool> pool_;              // parent: declared before the data plane using it
    std::unique_ptr<DataPlane> data_plane_;       // child: destroyed (and stopped) first
    std::shared_ptr<SharedCounterPage> counters_; // what the data plane served, for status
};

// The SessionFactory of the daemon: a DaemonSession per accepted client.
channel::SessionFactory make_session_factory(const SessionServices& services);

} // namespace rpmem::daemon
