// SPDX-License-Identifier: BSD-3-Clause
#include "channel/server_session.h"

#include <algorithm>
#include <cerrno>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "base/log_text.h"
#include "channel/client_certificate_policy.h"
#include "channel/logger.h"
#include "channel/peer_identity.h"
#include "channel/tls_error.h"
#include "protocol/codec.h"
#include "protocol/message_limits.h"
#include "protocol/version.h"

namespace rpmem::channel {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using protocol::MessageType;
using protocol::Status;

namespace {

// Requests a client may have queued before the session is dropped; our Client sends one at a
// time, so this only stops a flood.
constexpr unsigned kMaxRequestsInFlight = 8;
// Frames waiting to be written; more means the peer does not read.
constexpr std::size_t kMaxQueuedFrames = 64;
// How long a refused or failed connection may take to read our last words and close.
constexpr std::chrono::milliseconds kLingerTime{1000};

long long ms(std::chrono::milliseconds duration) {
    return static_cast<long long>(duration.count());
}

// The category a refusal is counted under in the log's summary line.
std::string_view refusal_kind(const Error& reason) {
    switch (reason.errno_value()) {
    case EACCES:
        return "certificate refused";
    case ETIMEDOUT:
        return "no TLS handshake and Hello in time";
    case EPERM:
        return "identity not allowed";
    case EBUSY:
        return "session limit";
    case ECONNRESET:
        return "closed by the peer";
    case EPROTONOSUPPORT:
        return "no common protocol version";
    default:
        return reason.source() == ErrorSource::tls ? "TLS handshake failed" : "bad Hello";
    }
}

Status status_from_decode_error(const Error& error) {
    auto status = protocol::status_from_wire(static_cast<std::uint16_t>(error.native_code()));
    return status.value_or(Status::bad_message);
}

// A message fits the protocol's limit; the tail is cut, not the meaning of the head.
std::string bounded(std::string message) {
    if (message.size() > protocol::kMaxMessageLength)
        message.resize(protocol::kMaxMessageLength);
    std::replace(message.begin(), message.end(), '\0', ' ');
    return message;
}

} // namespace

ServerSession::ServerSession(const SessionContext& context, std::uint64_t id, tcp::socket socket)
    : context_(context)
    , id_(id)
    , stream_(std::move(socket), context.tls)
    , deadline_timer_(stream_.get_executor())
    , handler_strand_(asio::make_strand(context.handler_pool)) {
    peer_.session_id = id;
    error_code ec;
    auto remote = stream_.lowest_layer().remote_endpoint(ec);
    if (!ec) {
        peer_.address = remote.address().to_string();
        peer_.port = remote.port();
    }
    peer_name_ = remote.address().is_v6() ? fmt::format("[{}]:{}", peer_.address, peer_.port)
                                          : fmt::format("{}:{}", peer_.address, peer_.port);
}

void ServerSession::start() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
        error_code ignored;
        self->stream_.lowest_layer().set_option(tcp::no_delay(true), ignored);
        self->deadline_ = Clock::now() + self->context_.config.handshake_timeout;
        self->arm_deadline();
        self->stream_.async_handshake(asio::ssl::stream_base::server,
                                      [self](const error_code& ec) { self->on_handshake(ec); });
    });
}

void ServerSession::stop() {
    abort(Error(ESHUTDOWN, "the server is stopping", ErrorSource::system, ESHUTDOWN));
}

void ServerSession::abort(Error reason) {
    asio::post(stream_.get_executor(),
               [self = shared_from_this(), reason = std::move(reason)] { self->close(reason); });
}

void ServerSession::on_handshake(const error_code& ec) {
    if (state_ != State::handshake)
        return;
    if (ec) {
        std::string why = describe_client_verify_failure(stream_.native_handle());
        Error reason = why.empty()
                           ? error_from_asio(ec, "TLS handshake")
                           : Error(EACCES, "TLS handshake: client certificate rejected: " + why,
                                   ErrorSource::tls);
        refuse(std::move(reason), std::nullopt, 0);
        return;
    }
    auto identity = peer_identity(stream_.native_handle());
    if (!identity) {
        refuse(std::move(identity.error()), std::nullopt, 0);
        return;
    }
    peer_.identity = std::move(*identity);
    state_ = State::hello;
    read_frame();
}

void ServerSession::read_frame() {
    async_read_frame(stream_, read_buffer_,
                     [self = shared_from_this()](const error_code& ec) { self->on_frame(ec); });
}

void ServerSession::on_frame(const error_code& ec) {
    if (state_ != State::hello && state_ != State::running)
        return;
    if (ec) {
        if (ec == asio::error::eof && state_ == State::running) {
            end_tls(); // the client's close_notify: a clean end of the session
            return;
        }
        Error reason = error_from_asio(ec, "reading a request");
        if (state_ == State::hello)
            refuse(std::move(reason), std::nullopt, 0);
        else
            close(std::move(reason));
        return;
    }
    if (read_buffer_.header_error) {
        // The header is not trustworthy, so neither is the next frame boundary: answer, close.
        Error reason = std::move(*read_buffer_.header_error);
        Status status = status_from_decode_error(reason);
        std::uint32_t id = read_buffer_.request_id;
        protocol::ErrorReply reply{status, bounded(reason.message())};
        if (state_ == State::hello)
            refuse(std::move(reason), protocol::Reply(reply), id);
        else
            finish_with(reply, id, std::move(reason));
        return;
    }

    std::uint32_t id = read_buffer_.header.request_id;
    auto request = protocol::decode_request(read_buffer_.header, read_buffer_.body);
    if (state_ == State::hello) {
        if (!request) {
            Status status = status_from_decode_error(request.error());
            Error reason = std::move(request.error());
            protocol::ErrorReply reply{status, bounded(reason.message())};
            refuse(std::move(reason), protocol::Reply(reply), id);
            return;
        }
        on_hello(*request, id);
        return;
    }

    // Running: any complete frame proves the client alive.
    deadline_ = Clock::now() + context_.config.heartbeat_timeout;
    if (!request) {
        // The frame boundary is intact; refuse this message and carry on.
        Status status = status_from_decode_error(request.error());
        logger().info("session {} ({}): refused a malformed request: {}", id_, peer_name_,
                      escape_for_log(request.error().message()));
        send(protocol::ErrorReply{status, bounded(request.error().message())}, id);
        read_frame();
        return;
    }
    switch (protocol::type_of(*request)) {
    case MessageType::ping:
        send(protocol::Pong{}, id);
        break;
    case MessageType::hello:
        send(protocol::ErrorReply{Status::bad_message, "hello was already exchanged"}, id);
        break;
    default:
        if (in_flight_ >= kMaxRequestsInFlight) {
            finish_with(
                protocol::ErrorReply{Status::busy, fmt::format("more than {} requests in flight",
                                                               kMaxRequestsInFlight)},
                id,
                Error(EBUSY, fmt::format("the client sent more than {} requests at once",
                                         kMaxRequestsInFlight)));
            return;
        }
        dispatch(std::move(*request), id);
        break;
    }
    if (state_ == State::running)
        read_frame();
}

protocol::HelloReply ServerSession::hello_reply(Status status, std::string message) const {
    protocol::HelloReply reply;
    reply.status = status;
    reply.message = bounded(std::move(message));
    reply.software = context_.config.software.substr(0, protocol::kMaxSoftwareLength);
    reply.session_id = id_;
    reply.heartbeat_timeout_ms =
        static_cast<std::uint32_t>(context_.config.heartbeat_timeout.count());
    reply.identity = peer_.identity;
    return reply;
}

void ServerSession::on_hello(const protocol::Request& request, std::uint32_t request_id) {
    const auto* hello = std::get_if<protocol::Hello>(&request);
    if (!hello) {
        std::string message =
            fmt::format("expected hello, got {}", protocol::name_of(protocol::type_of(request)));
        refuse(Error(EPROTO, message, ErrorSource::protocol, static_cast<int>(Status::bad_message)),
               protocol::Reply(protocol::ErrorReply{Status::bad_message, message}), request_id);
        return;
    }
    if (!protocol::ranges_meet(hello->min_version, hello->max_version)) {
        std::string message =
            fmt::format("no common protocol version: the client speaks {}..{}, this server {}..{}",
                        hello->min_version, hello->max_version, protocol::kMinProtocolVersion,
                        protocol::kProtocolVersion);
        refuse(Error(EPROTONOSUPPORT, message, ErrorSource::protocol,
                     static_cast<int>(Status::protocol_mismatch)),
               protocol::Reply(hello_reply(Status::protocol_mismatch, message)), request_id);
        return;
    }
    agreed_version_ = protocol::agreed_version(hello->min_version, hello->max_version);
    shared_capabilities_ = protocol::shared_capabilities(hello->capabilities);
    logger().debug("session {} ({}): hello from '{}' ({}, versions {}..{}, capabilities {:#x})",
                   id_, peer_name_, escape_for_log(peer_.identity), escape_for_log(hello->software),
                   hello->min_version, hello->max_version, hello->capabilities);

    // Identity check and factory are the daemon's code and may block: run them on the handler
    // pool. Reading pauses until they answer; the handshake deadline still runs.
    asio::post(handler_strand_, [self = shared_from_this(), request_id] {
        Result<void> made;
        const ServerConfig& config = self->context_.config;
        try {
            if (config.check_identity) {
                if (auto allowed = config.check_identity(self->peer_); !allowed)
                    made = fail(EPERM, allowed.error().message(), ErrorSource::remote,
                                static_cast<int>(Status::not_permitted));
            }
            // The identity's own quota first: one client filling its share must not also take
            // the places every client shares.
            if (made && !self->context_.acquire_identity(self->peer_.identity))
                made = fail(EBUSY, fmt::format("identity '{}' has reached the limit of {} "
                                               "sessions per client identity",
                                               escape_for_log(self->peer_.identity),
                                               config.max_sessions_per_client));
            else if (made)
                self->identity_counted_ = true;
            if (made && self->context_.active_sessions.fetch_add(1) >= config.max_sessions) {
                self->context_.active_sessions.fetch_sub(1);
                made = fail(EBUSY, fmt::format("the server has reached its limit of {} sessions",
                                               config.max_sessions));
            } else if (made) {
                self->counted_ = true;
                auto handler = self->context_.factory(self->peer_);
                if (handler && *handler) {
                    self->handler_ = std::move(*handler);
                    self->handler_->on_open(
                        [weak = std::weak_ptr<ServerSession>(self)](Error reason) {
                            if (auto session = weak.lock())
                                asio::post(session->stream_.get_executor(),
                                           [session, reason = std::move(reason)]() mutable {
                                               session->close(std::move(reason));
                                           });
                        });
                } else if (handler)
                    made = fail(EREMOTEIO, "the session factory returned no handler");
                else
                    made = fail(std::move(handler.error()));
            }
        } catch (const std::exception& e) {
            made = fail(EREMOTEIO, fmt::format("internal error: {}", e.what()));
        }
        asio::post(self->stream_.get_executor(), [self, made = std::move(made), request_id] {
            self->on_session_made(made, request_id);
        });
    });
}

void ServerSession::on_session_made(Result<void> made, std::uint32_t request_id) {
    if (state_ != State::hello)
        return; // closed meanwhile (deadline, server stop); the handler strand cleans up
    if (!made) {
        Error reason = std::move(made.error());
        Status status = reason.source() == ErrorSource::remote &&
                                reason.native_code() == static_cast<int>(Status::not_permitted)
                            ? Status::not_permitted
                            : protocol::status_of(reason.errno_value());
        std::string message = status == Status::not_permitted
                                  ? fmt::format("identity '{}' is not allowed: {}",
                                                escape_for_log(peer_.identity), reason.message())
                                  : reason.message();
        refuse(Error(reason.errno_value(), message, reason.source(), reason.native_code()),
               protocol::Reply(hello_reply(status, message)), request_id);
        return;
    }
    state_ = State::running;
    context_.left_pending(id_);
    deadline_ = Clock::now() + context_.config.heartbeat_timeout;
    arm_deadline(); // the heartbeat deadline may come before the handshake deadline did
    logger().info("session {} ({}): identity '{}' accepted", id_, peer_name_,
                  escape_for_log(peer_.identity));
    protocol::HelloReply reply = hello_reply(Status::ok, {});
    reply.version = agreed_version_;
    reply.capabilities = shared_capabilities_;
    send(reply, request_id);
    read_frame();
}

void ServerSession::dispatch(protocol::Request request, std::uint32_t request_id) {
    ++in_flight_;
    asio::post(
        handler_strand_, [self = shared_from_this(), request = std::move(request), request_id] {
            protocol::Reply reply = self->run_handler(request);
            auto frame = protocol::encode(reply, request_id);
            if (!frame) {
                logger().error("session {} ({}): the handler's {} cannot be encoded: {}", self->id_,
                               self->peer_name_, protocol::name_of(protocol::type_of(reply)),
                               frame.error().message());
                frame = protocol::encode(
                    protocol::failure_reply(protocol::type_of(request), Status::fatal,
                                            bounded("internal error: " + frame.error().message())),
                    request_id);
            }
            asio::post(self->stream_.get_executor(), [self, frame = std::move(frame)]() mutable {
                --self->in_flight_;
                if (self->state_ == State::running && frame)
                    self->send_frame(std::move(*frame));
            });
        });
}

protocol::Reply ServerSession::run_handler(const protocol::Request& request) {
    MessageType type = protocol::type_of(request);
    if (!handler_)
        return protocol::failure_reply(type, Status::fatal, "the session is closed");
    try {
        protocol::Reply reply = handler_->handle(request);
        MessageType reply_type = protocol::type_of(reply);
        if (reply_type == protocol::reply_type_of(type) || reply_type == MessageType::error_reply)
            return reply;
        logger().error("session {} ({}): handler answered {} with {}", id_, peer_name_,
                       protocol::name_of(type), protocol::name_of(reply_type));
    } catch (const std::exception& e) {
        logger().error("session {} ({}): handler failed on {}: {}", id_, peer_name_,
                       protocol::name_of(type), escape_for_log(e.what()));
    } catch (...) {
        logger().error("session {} ({}): handler failed on {}", id_, peer_name_,
                       protocol::name_of(type));
    }
    return protocol::failure_reply(type, Status::fatal, "internal error in the server");
}

void ServerSession::send(const protocol::Reply& reply, std::uint32_t request_id) {
    auto frame = protocol::encode(reply, request_id);
    if (!frame) {
        // Our own replies are built within the limits; should one not be, say so plainly.
        logger().error("session {} ({}): cannot encode {}: {}", id_, peer_name_,
                       protocol::name_of(protocol::type_of(reply)), frame.error().message());
        frame = protocol::encode(
            protocol::Reply(protocol::ErrorReply{Status::fatal, "internal error"}), request_id);
    }
    if (frame)
        send_frame(std::move(*frame));
}

void ServerSession::send_frame(std::vector<std::uint8_t> frame) {
    if (writer_.queued() >= kMaxQueuedFrames) {
        close(Error(ENOBUFS, "the client does not read its replies"));
        return;
    }
    writer_.send(stream_, std::move(frame), [self = shared_from_this()](const error_code& ec) {
        if (self->state_ == State::closed || self->state_ == State::lingering)
            return false;
        if (ec) {
            self->close(error_from_asio(ec, "writing a reply"));
            return false;
        }
        if (self->writer_.queued() == 0 && self->state_ == State::finishing)
            self->linger();
        return true;
    });
}

void ServerSession::report_refusal(const Error& reason) {
    // One line per refusal, but rate-limited: a flood of them must not flood the log.
    context_.log_refusal(
        refusal_kind(reason),
        fmt::format("refused connection from {} (session {}{}{}{}): {}", peer_name_, id_,
                    peer_.identity.empty() ? "" : ", identity '", escape_for_log(peer_.identity),
                    peer_.identity.empty() ? "" : "'", escape_for_log(reason.message())));
    if (context_.config.on_refusal) {
        try {
            context_.config.on_refusal(Refusal{peer_name_, peer_.identity, reason});
        } catch (const std::exception& e) {
            logger().error("session {}: refusal observer threw: {}", id_, e.what());
        }
    }
}

void ServerSession::refuse(Error reason, std::optional<protocol::Reply> reply,
                           std::uint32_t request_id) {
    report_refusal(reason);
    if (reply) {
        finish_with(*reply, request_id, std::move(reason));
    } else {
        close_reason_ = std::move(reason);
        linger();
    }
}

void ServerSession::finish_with(const protocol::Reply& reply, std::uint32_t request_id,
                                Error reason) {
    if (!close_reason_)
        close_reason_ = std::move(reason);
    state_ = State::finishing;
    deadline_ = Clock::now() + kLingerTime;
    arm_deadline();
    send(reply, request_id);
    if (state_ == State::finishing && !writer_.writing())
        linger();
}

void ServerSession::linger() {
    // Closing a socket with unread input makes the kernel send a reset, which can destroy the
    // reply or TLS alert still on its way to the client. So: shut down our direction, read and
    // discard until the client closes too, then close; bounded by the deadline.
    state_ = State::lingering;
    deadline_ = Clock::now() + kLingerTime;
    arm_deadline();
    error_code ignored;
    stream_.lowest_layer().shutdown(tcp::socket::shutdown_send, ignored);
    drain();
}

void ServerSession::end_tls() {
    state_ = State::ending;
    close_reason_ = Error(ENOTCONN, "the client closed the channel");
    if (writer_.writing()) {
        // A TLS shutdown must not overlap a write; a heartbeat reply still on its way only
        // costs the client our close_notify.
        close(*close_reason_);
        return;
    }
    deadline_ = Clock::now() + kLingerTime;
    arm_deadline();
    stream_.async_shutdown([self = shared_from_this()](const error_code&) {
        if (self->state_ == State::ending)
            self->close(*self->close_reason_);
    });
}

void ServerSession::drain() {
    stream_.next_layer().async_read_some(
        asio::buffer(drain_buffer_),
        [self = shared_from_this()](const error_code& ec, std::size_t) {
            if (self->state_ != State::lingering)
                return;
            if (ec) {
                self->close(*self->close_reason_);
                return;
            }
            self->drain();
        });
}

void ServerSession::arm_deadline() {
    deadline_timer_.expires_at(deadline_);
    deadline_timer_.async_wait(
        [self = shared_from_this()](const error_code& ec) { self->on_deadline(ec); });
}

void ServerSession::on_deadline(const error_code& ec) {
    // Whoever cancels the wait (close, or moving the deadline earlier) re-arms it if needed.
    if (ec == asio::error::operation_aborted || state_ == State::closed)
        return;
    if (Clock::now() < deadline_) {
        arm_deadline(); // moved later by a frame that arrived meanwhile
        return;
    }
    switch (state_) {
    case State::handshake:
    case State::hello: {
        // A read or the handshake may still be pending on the socket: close, do not linger.
        Error reason(ETIMEDOUT, fmt::format("no TLS handshake and Hello within {} ms",
                                            ms(context_.config.handshake_timeout)));
        report_refusal(reason);
        close(std::move(reason));
        break;
    }
    case State::running:
        close(Error(ETIMEDOUT, fmt::format("no frame from the client for {} ms (heartbeat "
                                           "timeout)",
                                           ms(context_.config.heartbeat_timeout))));
        break;
    default:
        close(close_reason_.value_or(Error(ETIMEDOUT, "the client did not close")));
        break;
    }
}

void ServerSession::close(Error reason) {
    if (state_ == State::closed)
        return;
    bool was_running = state_ == State::running || state_ == State::ending;
    state_ = State::closed;
    if (!close_reason_)
        close_reason_ = std::move(reason);
    error_code ignored;
    deadline_timer_.cancel();
    stream_.lowest_layer().close(ignored);
    context_.left_pending(id_);
    if (was_running)
        logger().info("session {} ({}, identity '{}'): closed: {}", id_, peer_name_,
                      escape_for_log(peer_.identity), escape_for_log(close_reason_->message()));

    // on_close runs on the handler strand, after any request still being handled there.
    asio::post(handler_strand_, [self = shared_from_this(), why = *close_reason_] {
        // The place is freed first, so that whoever learns of the close through on_close may
        // connect again at once.
        if (self->counted_) {
            self->context_.active_sessions.fetch_sub(1);
            self->counted_ = false;
        }
        if (self->identity_counted_) {
            self->context_.release_identity(self->peer_.identity);
            self->identity_counted_ = false;
        }
        if (self->handler_) {
            self->handler_->on_close(why);
            self->handler_.reset();
        }
        self->context_.on_finished(self->id_);
    });
}

} // namespace rpmem::channel
