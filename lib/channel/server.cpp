// SPDX-License-Identifier: BSD-3-Clause
#include "channel/server.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <fmt/format.h>

#include "channel/logger.h"
#include "channel/server_session.h"
#include "channel/tls_context.h"
#include "channel/tls_error.h"

namespace rpmem::channel {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// The state of one Server. Members are declared parent before child: the TLS context, the
// io_context and the handler pool outlive the acceptor and every session. The acceptor and
// its retry timer live on their own strand; the session registry is guarded by its mutex.
class Server::Impl {
public:
    Impl(ServerConfig config, SessionFactory factory, std::unique_ptr<asio::ssl::context> tls)
        : config_(std::move(config))
        , factory_(std::move(factory))
        , tls_(std::move(tls))
        , handler_pool_(std::max(config_.handler_threads, 1U))
        , accept_strand_(asio::make_strand(io_))
        , acceptor_(accept_strand_)
        , retry_timer_(accept_strand_)
        , context_{config_,       factory_,         *tls_,
                   handler_pool_, active_sessions_, [this](std::uint64_t id) { on_finished(id); }} {}

    ~Impl() { stop(); }

    Result<void> listen();
    void run();
    void stop();
    std::uint16_t port() const noexcept { return port_; }
    std::size_t session_count() const { return active_sessions_.load(); }

private:
    void accept_next();
    void on_finished(std::uint64_t id);

    const ServerConfig config_;
    const SessionFactory factory_;
    std::unique_ptr<asio::ssl::context> tls_;
    asio::io_context io_;
    asio::thread_pool handler_pool_;
    asio::strand<asio::io_context::executor_type> accept_strand_;
    tcp::acceptor acceptor_;
    asio::steady_timer retry_timer_;
    std::atomic<std::size_t> active_sessions_{0};
    SessionContext context_;
    // Keeps io_.run() going while idle (outstanding work), until reset when stopping.
    std::optional<asio::any_io_executor> work_;
    std::vector<std::thread> io_threads_;
    std::atomic<std::uint64_t> next_session_id_{1};
    std::uint16_t port_ = 0;

    std::mutex mutex_;
    std::condition_variable finished_;
    std::map<std::uint64_t, std::weak_ptr<ServerSession>> sessions_; // guarded by mutex_
    bool stopping_ = false;                                          // guarded by mutex_
};

Result<void> Server::Impl::listen() {
    std::string where = fmt::format("listening on {} port {}", config_.address, config_.port);
    error_code ec;
    auto address = asio::ip::make_address(config_.address, ec);
    if (ec)
        return fail(EINVAL, fmt::format("{}: '{}' is not an IP address", where, config_.address));
    tcp::endpoint endpoint(address, config_.port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec)
        acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
        acceptor_.bind(endpoint, ec);
    if (!ec)
        acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
        return fail(error_from_asio(ec, where));
    port_ = acceptor_.local_endpoint(ec).port();
    if (ec)
        return fail(error_from_asio(ec, where));
    return {};
}

void Server::Impl::run() {
    work_.emplace(asio::prefer(io_.get_executor(), asio::execution::outstanding_work.tracked));
    asio::post(accept_strand_, [this] { accept_next(); });
    unsigned threads = std::max(config_.io_threads, 1U);
    for (unsigned i = 0; i < threads; ++i) {
        io_threads_.emplace_back([this] {
            // Handlers report errors as values; anything thrown is a bug, logged, survived.
            for (;;) {
                try {
                    io_.run();
                    return;
                } catch (const std::exception& e) {
                    logger().error("control server: I/O thread caught: {}", e.what());
                }
            }
        });
    }
    logger().info("control server listening on {} port {}", config_.address, port_);
}

void Server::Impl::accept_next() {
    acceptor_.async_accept(
        asio::make_strand(io_), [this](const error_code& ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted || !acceptor_.is_open())
                return;
            if (ec) {
                // Out of descriptors or memory: existing sessions go on; try again shortly rather
                // than spin on a listener that fails at once.
                logger().warn("control server: accept failed: {}", ec.message());
                retry_timer_.expires_after(std::chrono::milliseconds(100));
                retry_timer_.async_wait([this](const error_code& timer_ec) {
                    if (!timer_ec)
                        accept_next();
                });
                return;
            }
            std::uint64_t id = next_session_id_++;
            auto session = std::make_shared<ServerSession>(context_, id, std::move(socket));
            {
                std::lock_guard lock(mutex_);
                if (stopping_)
                    return; // the session and its socket die here
                sessions_.emplace(id, session);
            }
            session->start();
            accept_next();
        });
}

void Server::Impl::on_finished(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    sessions_.erase(id);
    finished_.notify_all();
}

void Server::Impl::stop() {
    std::vector<std::shared_ptr<ServerSession>> sessions;
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return;
        stopping_ = true;
        for (auto& [id, weak] : sessions_) {
            if (auto session = weak.lock())
                sessions.push_back(std::move(session));
        }
    }
    std::promise<void> closed;
    auto acceptor_closed = closed.get_future();
    asio::post(accept_strand_, [this, &closed] {
        error_code ignored;
        acceptor_.close(ignored);
        retry_timer_.cancel();
        closed.set_value();
    });
    if (!io_threads_.empty())
        acceptor_closed.wait();
    for (auto& session : sessions)
        session->stop();
    sessions.clear();
    {
        // Every session, also one accepted just before stopping_, ends with on_finished.
        std::unique_lock lock(mutex_);
        if (!io_threads_.empty())
            finished_.wait(lock, [this] { return sessions_.empty(); });
    }
    work_.reset();
    for (auto& thread : io_threads_)
        thread.join();
    handler_pool_.join();
    logger().info("control server on {} port {} stopped", config_.address, port_);
}

Server::Server(std::shared_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

Server::~Server() {
    impl_->stop();
}

Result<std::unique_ptr<Server>> Server::start(ServerConfig config, SessionFactory factory) {
    if (!factory)
        return fail(EINVAL, "starting the control server: no session factory");
    using std::chrono::milliseconds;
    if (config.handshake_timeout <= milliseconds::zero() ||
        config.heartbeat_timeout <= milliseconds::zero() ||
        config.heartbeat_timeout.count() > 0xffffffffLL)
        return fail(EINVAL, "starting the control server: timeouts must be positive and fit "
                            "in 32 bits of milliseconds");
    std::string where =
        fmt::format("starting the control server on {} port {}", config.address, config.port);
    auto tls = make_tls_context(config.tls, TlsRole::server);
    if (!tls)
        return fail(std::move(tls.error()).add_context(where));
    auto impl = std::make_shared<Impl>(std::move(config), std::move(factory), std::move(*tls));
    if (auto ok = impl->listen(); !ok)
        return fail(std::move(ok.error()));
    impl->run();
    return std::unique_ptr<Server>(new Server(std::move(impl)));
}

std::uint16_t Server::port() const noexcept {
    return impl_->port();
}

std::size_t Server::session_count() const {
    return impl_->session_count();
}

void Server::stop() {
    impl_->stop();
}

} // namespace rpmem::channel
