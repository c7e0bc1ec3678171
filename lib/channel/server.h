// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/error.h"
#include "channel/session_handler.h"
#include "channel/tls_files.h"

namespace rpmem::channel {

struct ServerConfig {
    std::string address = "127.0.0.1"; // IPv4 or IPv6 address to listen on ("::" for all)
    std::uint16_t port = 0;            // 0: any free port (read it back with Server::port())
    TlsFiles tls;
    std::chrono::milliseconds handshake_timeout{10'000}; // TCP accept until Hello answered
    std::chrono::milliseconds heartbeat_timeout{15'000}; // a client silent this long is dropped
    unsigned io_threads = 1;                             // run the TLS I/O of every session
    unsigned handler_threads = 4; // run SessionHandler calls; bounds blocking daemon work
    std::size_t max_sessions = 256;
    // Sessions one client identity may hold at once, so that one client cannot take every
    // place; checked at the Hello exchange, where the identity is known.
    std::size_t max_sessions_per_client = 64;
    // Admission before authentication: connections accepted and not yet past Hello (TLS
    // handshake running, Hello awaited), in total and per source IP address. A connection at
    // the per-source limit takes the place of its source's oldest pending connection, so that
    // idle connections from a neighbour behind the same address (or NAT) never keep a client
    // that authenticates out. At the total
    // limit a newcomer from a source holding fewer than the busiest source (less one) takes the
    // place of the busiest source's oldest pending connection; one from a source that already
    // holds as many is closed at once. So a flood from some addresses cannot lock out a client
    // from another, and flooders cannot make the server churn TLS state.
    std::size_t max_pending = 128;
    std::size_t max_pending_per_source = 16;
    // Refused connections get a log line each for the first `refusal_log_burst` of an interval,
    // then one summary line per `refusal_log_interval`.
    std::size_t refusal_log_burst = 5;
    std::chrono::milliseconds refusal_log_interval{10'000};
    std::string software = "rpmemd"; // told to clients in the HelloReply
    IdentityCheck check_identity;    // empty: every client the CA signed is accepted
    RefusalObserver on_refusal;      // optional; called on an I/O thread, must be quick
};

// The server end of the control channel: accepts TLS 1.3 connections with mutual
// authentication, exchanges Hello (version negotiation, identity check, session creation
// through the SessionFactory), then passes each request to the session's SessionHandler and
// sends its reply.
//
// Threads: Asio, asynchronous, on two small pools. `io_threads` run every socket, timer and the
// framing of all sessions (each session on its own strand), and answer Pings at once;
// `handler_threads` run the SessionHandler calls (each session on its own strand, so calls of
// one session are serialized). Sessions are long-lived and mostly idle — the data path runs
// over the fabric — so a thread per session would mostly sleep, while the handler's work
// (creating and mapping pool files, registering memory) can block, which is why it never runs
// on the I/O threads: a slow create cannot delay another session's heartbeat.
//
// Robustness: every session has a deadline (handshake, then heartbeat: a session receiving
// no frame for heartbeat_timeout is closed); a bad frame header gets an ErrorReply and the
// connection is closed (the stream has no trustworthy frame boundary any more); a bad body
// gets an ErrorReply and the session goes on; at most a few requests may be in flight per
// session; a peer that stops reading is dropped. None of it affects other sessions.
//
// Thread-safe. Destroying the Server stops it: it stops accepting, ends every session (each
// handler's on_close runs) and joins its threads.
class Server {
public:
    static Result<std::unique_ptr<Server>> start(ServerConfig config, SessionFactory factory);

    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // The port actually bound (useful with port 0).
    std::uint16_t port() const noexcept;

    // Sessions past the Hello exchange and not yet closed.
    std::size_t session_count() const;
    // Connections accepted and not yet past Hello.
    std::size_t pending_count() const;

    // Stops accepting and ends every session; returns once every on_close has run and the
    // threads are joined (so it waits for handle() calls still running). Idempotent. Must not
    // be called from a SessionHandler, the factory or an observer: it would wait for itself.
    void stop();

    class Impl;

private:
    explicit Server(std::shared_ptr<Impl> impl);
    std::shared_ptr<Impl> impl_;
};

} // namespace rpmem::channel
