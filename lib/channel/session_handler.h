// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/error.h"
#include "protocol/reply.h"
#include "protocol/request.h"

namespace rpmem::channel {

// Who is at the other end of a server session.
struct PeerInfo {
    std::uint64_t session_id = 0; // unique per Server, for log lines
    std::string identity;         // subject CN of the verified client certificate
    std::string address;          // the client's IP address
    std::uint16_t port = 0;       // and TCP port
};

// "address:port" of `peer`, with the address in brackets when it is IPv6.
inline std::string endpoint_text(const PeerInfo& peer) {
    const bool v6 = peer.address.find(':') != std::string::npos;
    return (v6 ? "[" + peer.address + "]" : peer.address) + ":" + std::to_string(peer.port);
}

// The daemon's half of one session: the Server calls handle() for each request in the order
// they arrived, one at a time, and on_close() exactly once after the last handle(), when the
// channel ends for any reason (close by the client, lost connection, heartbeat timeout, server
// stop). All calls for one session come from the server's handler thread pool, never two at
// once, so an implementation needs no locking of its own state; handle() may block (it runs
// off the I/O threads, and heartbeats are answered meanwhile). Hello and Ping never reach
// handle(); the Server answers them. handle() should return the reply type that answers the
// request (protocol::failure_reply helps with errors); a wrong type or an exception is
// replaced by a Status::fatal reply. Owned by the Server from the factory's return until after
// on_close().
class SessionHandler {
public:
    virtual ~SessionHandler() = default;

    virtual protocol::Reply handle(const protocol::Request& request) = 0;

    // `reason` says why the channel ended, e.g. ECONNRESET "connection closed by the peer"
    // or ETIMEDOUT for a silent client.
    virtual void on_close(const Error& reason) noexcept = 0;

    // Ends this session from any thread, at any time (e.g. when the daemon's data plane for it
    // died): the channel closes with `reason`, then on_close() runs as for any other end. A
    // call after the session ended does nothing.
    using Ender = std::function<void(Error reason)>;
    // Called once, on the handler pool, right after the factory made the handler; the default
    // ignores it.
    virtual void on_open(Ender end) { (void)end; }
};

// Makes the handler of a new session once its client is authenticated and its identity
// accepted. An error refuses the session: the client gets a HelloReply with
// protocol::status_of(error errno) and the error's message. Called on the handler pool.
using SessionFactory = std::function<Result<std::unique_ptr<SessionHandler>>(const PeerInfo&)>;

// Decides whether an authenticated client identity may open a session (the daemon's allow
// list). An error refuses it with Status::not_permitted and the error's message. Called on the
// handler pool.
using IdentityCheck = std::function<Result<void>(const PeerInfo&)>;

// A connection the server turned away before a session began: TLS handshake failure (bad,
// expired or missing client certificate, wrong CA), no common protocol version, identity not
// allowed, factory refusal, handshake timeout.
struct Refusal {
    std::string peer;     // "address:port"
    std::string identity; // empty when the TLS handshake did not get that far
    Error reason;
};

using RefusalObserver = std::function<void(const Refusal&)>;

} // namespace rpmem::channel
