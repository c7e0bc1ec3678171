// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include "channel/frame_reader.h"
#include "channel/frame_writer.h"
#include "channel/server.h"
#include "protocol/reply.h"
#include "protocol/request.h"

namespace rpmem::channel {

// What every session of one Server shares. Owned by the Server, which outlives its sessions.
struct SessionContext {
    const ServerConfig& config;
    const SessionFactory& factory;
    boost::asio::ssl::context& tls;
    boost::asio::thread_pool& handler_pool;
    std::atomic<std::size_t>& active_sessions;                 // sessions holding a handler
    std::function<void(std::uint64_t session_id)> on_finished; // after on_close, last call
    // The session is past Hello or closed: it no longer counts as pending. Idempotent.
    std::function<void(std::uint64_t session_id)> left_pending;
    // Logs a refusal line, or only counts it (rate limit); `kind` is a fixed category.
    std::function<void(std::string_view kind, const std::string& line)> log_refusal;
    // Takes one of the sessions of `identity` (false: it holds max_sessions_per_client), and
    // gives it back. Any thread.
    std::function<bool(const std::string& identity)> acquire_identity;
    std::function<void(const std::string& identity)> release_identity;
};

// One accepted connection, from the TLS handshake to on_close. Internal to Server.
//
// Its socket, timer and all fields below "I/O strand only" live on one strand of the I/O pool;
// the SessionHandler lives on one strand of the handler pool. Requests travel from the first to
// the second, replies back. Kept alive by the shared_ptrs in pending handlers; the Server keeps
// a weak reference to stop it.
class ServerSession : public std::enable_shared_from_this<ServerSession> {
public:
    ServerSession(const SessionContext& context, std::uint64_t id,
                  boost::asio::ip::tcp::socket socket);

    // Begins the handshake. Call once, right after construction.
    void start();

    // Ends the session from any thread (server stop).
    void stop();
    // Ends the session from any thread for `reason` (eviction at the pending limit).
    void abort(Error reason);

private:
    using Clock = std::chrono::steady_clock;

    enum class State {
        handshake, // TLS handshake running
        hello,     // waiting for the Hello and the session's handler
        running,   // serving requests
        finishing, // a last reply is being written, then lingering
        lingering, // output shut down, input drained until EOF, then closed
        ending,    // the client sent close_notify; ours is on its way, then closed
        closed,
    };

    void on_handshake(const boost::system::error_code& ec);
    void read_frame();
    void on_frame(const boost::system::error_code& ec);
    void end_tls();
    void on_hello(const protocol::Request& request, std::uint32_t request_id);
    void on_session_made(Result<void> made, std::uint32_t request_id);
    void dispatch(protocol::Request request, std::uint32_t request_id);
    protocol::Reply run_handler(const protocol::Request& request); // handler strand only
    void send(const protocol::Reply& reply, std::uint32_t request_id);
    void send_frame(std::vector<std::uint8_t> frame);
    void report_refusal(const Error& reason);
    void refuse(Error reason, std::optional<protocol::Reply> reply, std::uint32_t request_id);
    void finish_with(const protocol::Reply& reply, std::uint32_t request_id, Error reason);
    void linger();
    void drain();
    void arm_deadline();
    void on_deadline(const boost::system::error_code& ec);
    void close(Error reason);
    protocol::HelloReply hello_reply(protocol::Status status, std::string message) const;

    const SessionContext& context_;
    const std::uint64_t id_;
    PeerInfo peer_;
    std::string peer_name_; // "address:port" for log lines
    boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
    boost::asio::steady_timer deadline_timer_;
    boost::asio::strand<boost::asio::thread_pool::executor_type> handler_strand_;

    // Handler strand only.
    std::unique_ptr<SessionHandler> handler_;
    bool counted_ = false;          // holds one of context_.active_sessions
    bool identity_counted_ = false; // holds one of its identity's sessions

    // I/O strand only.
    State state_ = State::handshake;
    // What the Hello agreed (protocol/version.h), for the HelloReply once the session is made.
    std::uint16_t agreed_version_ = protocol::kProtocolVersion;
    std::uint64_t shared_capabilities_ = 0;
    Clock::time_point deadline_;
    FrameBuffer read_buffer_;
    FrameWriter writer_;
    unsigned in_flight_ = 0;
    std::optional<Error> close_reason_;
    std::array<std::uint8_t, 512> drain_buffer_{};
};

} // namespace rpmem::channel
