// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/error.h"
#include "channel/tls_files.h"
#include "protocol/reply.h"
#include "protocol/request.h"

namespace rpmem::channel {

struct ClientConfig {
    std::string host;          // rpmemd's host name or IP address
    std::uint16_t port = 7636; // rpmemd's default port
    std::string server_name;   // the name the server certificate must carry; empty: host
    TlsFiles tls;
    std::chrono::milliseconds connect_timeout{10'000};   // name resolution and TCP connect
    std::chrono::milliseconds handshake_timeout{10'000}; // TLS handshake and Hello exchange
    std::chrono::milliseconds request_timeout{60'000};   // one request until its reply
    std::chrono::milliseconds heartbeat_interval{1'000}; // how often to ping the server
    std::chrono::milliseconds heartbeat_timeout{5'000};  // silence that counts as a dead server
    std::string software = "librpmem";                   // told to the server in the Hello
    // Called once, on the client's I/O thread, when the channel fails after connect() (lost
    // connection, heartbeat timeout, request timeout, protocol error). Must not destroy the
    // Client; should return quickly.
    std::function<void(const Error&)> on_failure;
};

// The client end of a control channel to rpmemd: a mutually authenticated TLS 1.3 connection,
// the Hello exchange, then synchronous request/reply calls.
//
// Threads: the Client owns one I/O thread running its own io_context. It reads every frame,
// answers nothing, sends a Ping every heartbeat interval and declares the server dead when no
// frame arrived for heartbeat_timeout, also while a call is waiting and while the caller's
// thread is busy elsewhere. Callers only hand frames to that thread and wait on a future with
// a deadline, so call() is safe from any number of threads (calls are serialized; heartbeats
// go between them) and nothing here races with the heartbeat. A background timer on the same
// thread as the socket was chosen over a separate heartbeat thread because then every socket
// operation happens on one thread and needs no lock.
//
// Failure is sticky: after the first failure every call() returns that error at once. The
// destructor closes the connection and joins the I/O thread.
class Client {
public:
    // Resolves, connects, handshakes (verifying the server's certificate against config.tls.ca
    // and its name against server_name or host), and exchanges Hello. Errors name the host, the
    // port and the step, with errno: ETIMEDOUT for a step past its deadline, ECONNREFUSED and
    // other connect errors as is, EACCES when either side refused a certificate, the mapped
    // status errno when the server refused the session (EPERM for an identity not allowed,
    // EPROTONOSUPPORT for no common version).
    static Result<std::unique_ptr<Client>> connect(ClientConfig config);

    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Sends `request` and waits for its reply. A reply is returned as is, whatever its status
    // (see expect() below); an ErrorReply from the server, a wrong reply type, a lost channel
    // or a reply later than request_timeout is an error, and the last two also end the
    // channel. Hello and Ping are the channel's own business and are refused with EINVAL.
    Result<protocol::Reply> call(const protocol::Request& request);

    // The first failure of the channel, if any.
    std::optional<Error> failure() const;

    // What the server said in its HelloReply (version, session id, identity it saw, ...).
    const protocol::HelloReply& hello() const noexcept;

    // "host:port", for messages.
    const std::string& peer() const noexcept;

    // The server's numeric address as connected ("192.0.2.7", "::1"): where the data path
    // goes too, so a host name is looked up once, within the connect timeout.
    const std::string& peer_address() const noexcept;

    // Ends the channel; later calls fail with ENOTCONN. Idempotent.
    void close();

    class Impl;

private:
    explicit Client(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// The reply of a call() as the type that answers the request when its status is ok; an error
// carrying the status's errno and the server's message (prefixed with `what`) otherwise.
template <typename ReplyType>
Result<ReplyType> expect(Result<protocol::Reply>&& reply, std::string_view what) {
    if (!reply)
        return fail(std::move(reply.error()).add_context(what));
    auto* typed = std::get_if<ReplyType>(&*reply);
    if (!typed)
        return fail(EPROTO,
                    fmt::format("{}: got {} instead of {}", what,
                                protocol::name_of(protocol::type_of(*reply)),
                                protocol::name_of(ReplyType::kType)),
                    ErrorSource::protocol, static_cast<int>(protocol::Status::bad_message));
    if (typed->status != protocol::Status::ok)
        return fail(protocol::errno_of(typed->status),
                    fmt::format("{}: {}", what,
                                typed->message.empty() ? protocol::text_of(typed->status)
                                                       : std::string_view(typed->message)),
                    ErrorSource::remote, static_cast<int>(typed->status));
    return std::move(*typed);
}

} // namespace rpmem::channel
