// SPDX-License-Identifier: BSD-3-Clause
#include "channel/client.h"

#include <atomic>
#include <cerrno>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <openssl/x509v3.h>

#include "channel/frame_reader.h"
#include "channel/frame_writer.h"
#include "channel/logger.h"
#include "channel/name_resolver.h"
#include "channel/tls_context.h"
#include "channel/tls_error.h"
#include "protocol/codec.h"
#include "protocol/version.h"

namespace rpmem::channel {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using protocol::MessageType;

namespace {

long long ms(std::chrono::milliseconds duration) {
    return static_cast<long long>(duration.count());
}

// How long close() waits for the server's close_notify before it just closes the socket.
constexpr std::chrono::milliseconds kCloseNotifyWait{1000};

std::string host_port(const std::string& host, std::uint16_t port) {
    if (host.find(':') != std::string::npos)
        return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

// Runs `io` on the calling thread until `done()` or the deadline. On timeout, `cancel()` aborts
// the operation and its handler is drained, so nothing refers to the caller's locals later.
bool run_until(asio::io_context& io, const std::function<bool()>& done, Clock::time_point deadline,
               const std::function<void()>& cancel) {
    io.restart();
    while (!done()) {
        if (io.run_one_until(deadline) == 0)
            break; // deadline passed, or nothing left to run
    }
    if (done())
        return true;
    cancel();
    io.restart();
    while (!done() && io.run_one() != 0) {
    }
    return false;
}

} // namespace

// The state of one Client. Everything below "I/O thread only" is touched only by the I/O thread
// (or by the connecting thread before that thread exists); the rest is immutable after connect
// or guarded as marked. Members are declared parent before child: the TLS context and the
// io_context outlive the stream and the timer that use them.
class Client::Impl {
public:
    Impl(ClientConfig config, std::unique_ptr<asio::ssl::context> tls)
        : config_(std::move(config))
        , peer_(host_port(config_.host, config_.port))
        , tls_(std::move(tls))
        , stream_(io_, *tls_)
        , heartbeat_timer_(io_) {}

    ~Impl() { shutdown(); }

    Result<void> connect();
    void start();
    Result<protocol::Reply> call(const protocol::Request& request);
    std::optional<Error> failure() const;
    void close();
    void shutdown();

    const protocol::HelloReply& hello() const noexcept { return hello_; }
    const std::string& peer() const noexcept { return peer_; }
    const std::string& peer_address() const noexcept { return peer_address_; }

private:
    struct PendingCall {
        std::uint32_t id;
        MessageType request_type;
        std::promise<Result<protocol::Reply>> promise;
    };

    Result<void> configure_server_name();
    Result<void> exchange_hello(Clock::time_point deadline);
    void read_next();
    void on_frame();
    void send(std::vector<std::uint8_t> frame);
    void arm_heartbeat();
    void on_heartbeat();
    void fail_channel(Error error, bool notify);
    Error closed_error() const {
        return Error(ENOTCONN, fmt::format("control channel to {} closed", peer_));
    }

    const ClientConfig config_;
    const std::string peer_;
    std::string peer_address_; // set by connect()
    std::unique_ptr<asio::ssl::context> tls_;
    asio::io_context io_;
    asio::ssl::stream<tcp::socket> stream_;
    asio::steady_timer heartbeat_timer_;
    // Keeps io_.run() going while idle (outstanding work), until reset when stopping.
    std::optional<asio::any_io_executor> work_;
    std::thread thread_;
    protocol::HelloReply hello_;
    Clock::duration ping_interval_{};
    std::atomic<std::uint32_t> next_id_{1};

    std::mutex call_mutex_; // one call at a time

    mutable std::mutex failure_mutex_;
    std::optional<Error> failure_; // guarded by failure_mutex_

    // I/O thread only.
    FrameBuffer read_buffer_;
    FrameWriter writer_;
    bool failed_ = false;
    bool closing_ = false; // close() is exchanging close_notify
    std::optional<PendingCall> pending_;
    std::optional<std::uint32_t> ping_id_;
    Clock::time_point last_heard_;
    Clock::time_point last_ping_;
};

Result<void> Client::Impl::configure_server_name() {
    const std::string& name = config_.server_name.empty() ? config_.host : config_.server_name;
    SSL* ssl = stream_.native_handle();
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    error_code ec;
    asio::ip::make_address(name, ec);
    bool ok = !ec ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1
                  : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) == 1 &&
                        SSL_set_tlsext_host_name(ssl, name.c_str()) == 1;
    if (!ok)
        return fail(
            EINVAL,
            fmt::format("setting the expected server name '{}': {}", name, drain_openssl_errors()),
            ErrorSource::tls);
    return {};
}

Result<void> Client::Impl::connect() {
    auto connect_deadline = Clock::now() + config_.connect_timeout;

    auto endpoints = resolve_host(config_.host, config_.port, connect_deadline);
    if (!endpoints)
        return fail(std::move(endpoints.error()));

    error_code ec;
    bool connected = false;
    asio::async_connect(stream_.lowest_layer(), *endpoints,
                        [&](const error_code& e, const tcp::endpoint&) {
                            ec = e;
                            connected = true;
                        });
    if (!run_until(
            io_, [&] { return connected; }, connect_deadline,
            [&] { stream_.lowest_layer().close(ec); }))
        return fail(ETIMEDOUT, fmt::format("connecting to {}: no connection within {} ms", peer_,
                                           ms(config_.connect_timeout)));
    if (ec)
        return fail(error_from_asio(ec, fmt::format("connecting to {}", peer_)));
    // Requests and replies are small and latency-bound; do not let Nagle hold them back.
    stream_.lowest_layer().set_option(tcp::no_delay(true), ec);
    auto remote = stream_.lowest_layer().remote_endpoint(ec);
    peer_address_ = ec ? config_.host : remote.address().to_string();

    if (auto ok = configure_server_name(); !ok)
        return ok;
    auto handshake_deadline = Clock::now() + config_.handshake_timeout;
    bool shaken = false;
    stream_.async_handshake(asio::ssl::stream_base::client, [&](const error_code& e) {
        ec = e;
        shaken = true;
    });
    if (!run_until(
            io_, [&] { return shaken; }, handshake_deadline,
            [&] { stream_.lowest_layer().close(ec); }))
        return fail(ETIMEDOUT, fmt::format("TLS handshake with {}: not completed within {} ms",
                                           peer_, ms(config_.handshake_timeout)));
    if (ec) {
        std::string why = verify_failure(stream_.native_handle());
        if (!why.empty())
            return fail(
                EACCES,
                fmt::format("TLS handshake with {}: server certificate rejected: {} "
                            "(expected server name '{}', CA {})",
                            peer_, why,
                            config_.server_name.empty() ? config_.host : config_.server_name,
                            config_.tls.ca.string()),
                ErrorSource::tls);
        return fail(error_from_asio(ec, fmt::format("TLS handshake with {}", peer_)));
    }
    return exchange_hello(handshake_deadline);
}

Result<void> Client::Impl::exchange_hello(Clock::time_point deadline) {
    protocol::Hello hello;
    hello.software = config_.software;
    auto frame = protocol::encode(protocol::Request(hello), 0);
    if (!frame)
        return fail(std::move(frame.error()));

    // Read while writing: with TLS 1.3 the server judges our certificate only after our side
    // of the handshake is done, and its refusal arrives as an alert on this read, possibly
    // while the Hello is still being written.
    bool wrote = false;
    bool read = false;
    error_code write_ec;
    error_code read_ec;
    asio::async_write(stream_, asio::buffer(*frame), [&](const error_code& e, std::size_t) {
        write_ec = e;
        wrote = true;
    });
    async_read_frame(stream_, read_buffer_, [&](const error_code& e) {
        read_ec = e;
        read = true;
    });
    error_code ignored;
    if (!run_until(
            io_, [&] { return wrote && read; }, deadline,
            [&] { stream_.lowest_layer().close(ignored); }))
        return fail(ETIMEDOUT, fmt::format("waiting for the Hello reply from {}: none within {} ms",
                                           peer_, ms(config_.handshake_timeout)));

    if (read_ec && is_certificate_refusal(read_ec))
        return fail(EACCES,
                    fmt::format("TLS session with {} refused by the server: {} (certificate {})",
                                peer_, read_ec.message(),
                                config_.tls.certificate.empty() ? std::string("none")
                                                                : config_.tls.certificate.string()),
                    ErrorSource::tls);
    if (read_ec)
        return fail(
            error_from_asio(read_ec, fmt::format("waiting for the Hello reply from {}", peer_)));
    if (read_buffer_.header_error)
        return fail(std::move(*read_buffer_.header_error)
                        .add_context(fmt::format("reading the Hello reply from {}", peer_)));
    if (write_ec)
        return fail(error_from_asio(write_ec, fmt::format("sending Hello to {}", peer_)));

    auto reply = protocol::decode_reply(read_buffer_.header, read_buffer_.body);
    if (!reply)
        return fail(std::move(reply.error())
                        .add_context(fmt::format("reading the Hello reply from {}", peer_)));
    if (auto* refused = std::get_if<protocol::ErrorReply>(&*reply))
        return fail(protocol::errno_of(refused->status),
                    fmt::format("{} refused the Hello: {}", peer_, refused->message),
                    ErrorSource::remote, static_cast<int>(refused->status));
    auto* answer = std::get_if<protocol::HelloReply>(&*reply);
    if (!answer)
        return fail(EPROTO,
                    fmt::format("{} answered Hello with {}", peer_,
                                protocol::name_of(protocol::type_of(*reply))),
                    ErrorSource::protocol, static_cast<int>(protocol::Status::bad_message));
    if (answer->status != protocol::Status::ok)
        return fail(protocol::errno_of(answer->status),
                    fmt::format("{} refused the session: {}", peer_,
                                answer->message.empty() ? protocol::text_of(answer->status)
                                                        : std::string_view(answer->message)),
                    ErrorSource::remote, static_cast<int>(answer->status));
    if (!protocol::speaks(answer->version))
        return fail(EPROTO,
                    fmt::format("{} chose protocol version {}, which this client did not offer",
                                peer_, answer->version),
                    ErrorSource::protocol, static_cast<int>(protocol::Status::protocol_mismatch));
    if (!protocol::offered_all(answer->capabilities))
        return fail(EPROTO,
                    fmt::format("{} answered capabilities {:#x}, beyond the {:#x} this client "
                                "offered",
                                peer_, answer->capabilities, protocol::kCapabilities),
                    ErrorSource::protocol, static_cast<int>(protocol::Status::protocol_mismatch));
    hello_ = std::move(*answer);
    return {};
}

void Client::Impl::start() {
    ping_interval_ = config_.heartbeat_interval;
    if (hello_.heartbeat_timeout_ms > 0) {
        // Ping at least three times per server timeout, so one late pong does not cost the
        // session.
        auto server_limit = std::chrono::milliseconds(hello_.heartbeat_timeout_ms) / 3;
        ping_interval_ = std::min<Clock::duration>(ping_interval_, server_limit);
    }
    ping_interval_ = std::max<Clock::duration>(ping_interval_, std::chrono::milliseconds(1));
    last_heard_ = Clock::now();
    last_ping_ = last_heard_;
    work_.emplace(asio::prefer(io_.get_executor(), asio::execution::outstanding_work.tracked));
    read_next();
    arm_heartbeat();
    io_.restart();
    thread_ = std::thread([this] {
        // Handlers do not throw (errors travel as values); should one, the channel is lost
        // rather than the process.
        for (;;) {
            try {
                io_.run();
                return;
            } catch (const std::exception& e) {
                logger().error("control channel to {}: I/O thread caught: {}", peer_, e.what());
                fail_channel(Error(EIO, fmt::format("control channel to {}: internal error: {}",
                                                    peer_, e.what())),
                             true);
            }
        }
    });
    logger().info("control channel to {} open: session {}, identity '{}', protocol {}, {}", peer_,
                  hello_.session_id, hello_.identity, hello_.version, hello_.software);
}

void Client::Impl::read_next() {
    async_read_frame(stream_, read_buffer_, [this](const error_code& ec) {
        if (failed_ || closing_)
            return;
        if (ec) {
            fail_channel(error_from_asio(ec, fmt::format("control channel to {}", peer_)), true);
            return;
        }
        if (read_buffer_.header_error) {
            fail_channel(std::move(*read_buffer_.header_error)
                             .add_context(fmt::format("control channel to {}", peer_)),
                         true);
            return;
        }
        on_frame();
        if (!failed_)
            read_next();
    });
}

void Client::Impl::on_frame() {
    last_heard_ = Clock::now();
    auto reply = protocol::decode_reply(read_buffer_.header, read_buffer_.body);
    if (!reply) {
        fail_channel(
            std::move(reply.error()).add_context(fmt::format("control channel to {}", peer_)),
            true);
        return;
    }
    std::uint32_t id = read_buffer_.header.request_id;
    MessageType type = protocol::type_of(*reply);

    if (type == MessageType::pong && ping_id_ == id) {
        ping_id_.reset();
        arm_heartbeat(); // the timer waited for silence only; now the next ping is due
        return;
    }
    if (!pending_ || pending_->id != id) {
        fail_channel(Error(EPROTO,
                           fmt::format("control channel to {}: unexpected {} for request {}", peer_,
                                       protocol::name_of(type), id),
                           ErrorSource::protocol, static_cast<int>(protocol::Status::bad_message)),
                     true);
        return;
    }

    PendingCall call = std::move(*pending_);
    pending_.reset();
    if (auto* refused = std::get_if<protocol::ErrorReply>(&*reply)) {
        call.promise.set_value(
            fail(protocol::errno_of(refused->status),
                 fmt::format("{} refused {}: {}", peer_, protocol::name_of(call.request_type),
                             refused->message),
                 ErrorSource::remote, static_cast<int>(refused->status)));
        return;
    }
    if (type != protocol::reply_type_of(call.request_type)) {
        Error error(EPROTO,
                    fmt::format("control channel to {}: {} answered with {}", peer_,
                                protocol::name_of(call.request_type), protocol::name_of(type)),
                    ErrorSource::protocol, static_cast<int>(protocol::Status::bad_message));
        call.promise.set_value(fail(error));
        fail_channel(std::move(error), true);
        return;
    }
    call.promise.set_value(std::move(*reply));
}

void Client::Impl::send(std::vector<std::uint8_t> frame) {
    writer_.send(stream_, std::move(frame), [this](const error_code& ec) {
        if (failed_)
            return false;
        if (ec) {
            fail_channel(error_from_asio(ec, fmt::format("control channel to {}", peer_)), true);
            return false;
        }
        return true;
    });
}

void Client::Impl::arm_heartbeat() {
    // Wake when the next ping is due or when the server's silence would become fatal,
    // whichever is first; a frame arriving meanwhile just moves the latter.
    auto next = last_heard_ + config_.heartbeat_timeout;
    if (!ping_id_)
        next = std::min(next, last_ping_ + ping_interval_);
    heartbeat_timer_.expires_at(next);
    heartbeat_timer_.async_wait([this](const error_code& ec) {
        if (!ec && !failed_ && !closing_)
            on_heartbeat();
    });
}

void Client::Impl::on_heartbeat() {
    auto now = Clock::now();
    if (now - last_heard_ >= config_.heartbeat_timeout) {
        fail_channel(
            Error(ETIMEDOUT, fmt::format("control channel to {}: no heartbeat for {} ms, the "
                                         "server is dead, frozen or unreachable",
                                         peer_, ms(config_.heartbeat_timeout))),
            true);
        return;
    }
    if (!ping_id_ && now - last_ping_ >= ping_interval_) {
        std::uint32_t id = next_id_++;
        auto frame = protocol::encode(protocol::Request(protocol::Ping{}), id);
        if (frame) { // an empty ping always encodes
            ping_id_ = id;
            last_ping_ = now;
            send(std::move(*frame));
        }
    }
    arm_heartbeat();
}

void Client::Impl::fail_channel(Error error, bool notify) {
    if (failed_)
        return;
    failed_ = true;
    {
        std::lock_guard lock(failure_mutex_);
        failure_ = error;
    }
    if (notify)
        logger().warn("{}", error.message());
    error_code ignored;
    heartbeat_timer_.cancel();
    stream_.lowest_layer().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.lowest_layer().close(ignored);
    if (pending_) {
        pending_->promise.set_value(fail(error));
        pending_.reset();
    }
    if (notify && config_.on_failure) {
        try {
            config_.on_failure(error);
        } catch (const std::exception& e) {
            logger().error("control channel to {}: on_failure threw: {}", peer_, e.what());
        }
    }
}

std::optional<Error> Client::Impl::failure() const {
    std::lock_guard lock(failure_mutex_);
    return failure_;
}

Result<protocol::Reply> Client::Impl::call(const protocol::Request& request) {
    MessageType type = protocol::type_of(request);
    if (type == MessageType::hello || type == MessageType::ping)
        return fail(EINVAL,
                    fmt::format("{}: the channel sends {} itself", peer_, protocol::name_of(type)));
    std::lock_guard lock(call_mutex_);
    if (auto error = failure())
        return fail(std::move(*error));

    std::uint32_t id = next_id_++;
    auto frame = protocol::encode(request, id);
    if (!frame)
        return fail(std::move(frame.error()).add_context(fmt::format("sending to {}", peer_)));

    std::promise<Result<protocol::Reply>> promise;
    auto future = promise.get_future();
    asio::post(io_,
               [this, id, type, frame = std::move(*frame), promise = std::move(promise)]() mutable {
                   if (failed_ || closing_) {
                       promise.set_value(fail(failure().value_or(closed_error())));
                       return;
                   }
                   pending_.emplace(PendingCall{id, type, std::move(promise)});
                   send(std::move(frame));
               });
    logger().debug("{}: sent {} (request {})", peer_, protocol::name_of(type), id);

    if (future.wait_for(config_.request_timeout) == std::future_status::timeout) {
        // Give up on the channel: the server's state after a lost reply is unknown. The I/O
        // thread resolves the future, either with this error or with a reply that raced it.
        asio::post(io_, [this, id, type] {
            if (pending_ && pending_->id == id)
                fail_channel(Error(ETIMEDOUT, fmt::format("{}: no reply to {} within {} ms", peer_,
                                                          protocol::name_of(type),
                                                          ms(config_.request_timeout))),
                             true);
        });
    }
    return future.get();
}

void Client::Impl::close() {
    if (!thread_.joinable())
        return;
    auto end = [this] { fail_channel(closed_error(), false); };
    if (io_.get_executor().running_in_this_thread()) {
        end();
        return;
    }
    std::promise<void> done;
    auto finished = done.get_future();
    asio::post(io_, [&] {
        if (failed_) {
            done.set_value();
            return;
        }
        // A TLS close_notify tells rpmemd that this end was meant, not a crash. The frame
        // read still pending receives the server's answer (and stops there); the heartbeat
        // timer now bounds the exchange.
        closing_ = true;
        heartbeat_timer_.expires_after(
            std::min<Clock::duration>(kCloseNotifyWait, config_.handshake_timeout));
        heartbeat_timer_.async_wait([this](const error_code& ec) {
            error_code ignored;
            if (!ec)
                stream_.lowest_layer().close(ignored);
        });
        stream_.async_shutdown([end, &done](const error_code&) {
            end();
            done.set_value();
        });
    });
    finished.wait();
}

void Client::Impl::shutdown() {
    if (!thread_.joinable())
        return;
    close();
    work_.reset();
    thread_.join();
}

Client::Client(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::connect(ClientConfig config) {
    std::string peer = host_port(config.host, config.port);
    if (config.host.empty())
        return fail(EINVAL, "connecting the control channel: no host given");
    using std::chrono::milliseconds;
    if (config.connect_timeout <= milliseconds::zero() ||
        config.handshake_timeout <= milliseconds::zero() ||
        config.request_timeout <= milliseconds::zero() ||
        config.heartbeat_interval <= milliseconds::zero() ||
        config.heartbeat_timeout <= config.heartbeat_interval)
        return fail(EINVAL, fmt::format("connecting to {}: timeouts must be positive and the "
                                        "heartbeat timeout longer than its interval",
                                        peer));
    auto tls = make_tls_context(config.tls, TlsRole::client);
    if (!tls)
        return fail(std::move(tls.error()).add_context(fmt::format("connecting to {}", peer)));
    auto impl = std::make_unique<Impl>(std::move(config), std::move(*tls));
    if (auto ok = impl->connect(); !ok)
        return fail(std::move(ok.error()));
    impl->start();
    return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Result<protocol::Reply> Client::call(const protocol::Request& request) {
    return impl_->call(request);
}

std::optional<Error> Client::failure() const {
    return impl_->failure();
}

const protocol::HelloReply& Client::hello() const noexcept {
    return impl_->hello();
}

const std::string& Client::peer() const noexcept {
    return impl_->peer();
}

const std::string& Client::peer_address() const noexcept {
    return impl_->peer_address();
}

void Client::close() {
    impl_->close();
}

} // namespace rpmem::channel
