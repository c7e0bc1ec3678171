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
#include <malloc.h>

#include "base/log_rate_limiter.h"
#include "channel/logger.h"
#include "channel/server_session.h"
#include "channel/tls_context.h"
#include "channel/tls_error.h"

namespace rpmem::channel {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Pending connections hold TLS state (buffers, an SSL object): once a flood of them is over,
// give the memory back to the system. Below this many at the peak it is not worth a trim.
constexpr std::size_t kTrimAfterPendingPeak = 32;

} // namespace

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
        , summary_timer_(accept_strand_)
        , refusal_log_(config_.refusal_log_burst, config_.refusal_log_interval,
                       [] { return std::chrono::steady_clock::now(); })
        , context_{
              config_,
              factory_,
              *tls_,
              handler_pool_,
              active_sessions_,
              [this](std::uint64_t id) { on_finished(id); },
              [this](std::uint64_t id) { left_pending(id); },
              [this](std::string_view kind, const std::string& line) { log_refusal(kind, line); },
              [this](const std::string& identity) { return acquire_identity(identity); },
              [this](const std::string& identity) { release_identity(identity); }} {}

    ~Impl() { stop(); }

    Result<void> listen();
    void run();
    void stop();
    std::uint16_t port() const noexcept { return port_; }
    std::size_t session_count() const { return active_sessions_.load(); }
    std::size_t pending_count() const {
        std::lock_guard lock(mutex_);
        return pending_.size();
    }

private:
    // A connection accepted and not yet past Hello.
    struct Pending {
        std::string source; // the peer's IP address
        std::weak_ptr<ServerSession> session;
    };

    void accept_next();
    void admit(tcp::socket socket);
    void on_finished(std::uint64_t id);
    void left_pending(std::uint64_t id);
    // The oldest pending connection of `source`, no longer counted; mutex_ held.
    std::shared_ptr<ServerSession> take_eviction_victim(std::string source);
    void log_refusal(std::string_view kind, const std::string& line);
    void arm_summary_timer(); // accept strand
    void log_summary(bool final = false);
    bool acquire_identity(const std::string& identity);
    void release_identity(const std::string& identity);

    const ServerConfig config_;
    const SessionFactory factory_;
    std::unique_ptr<asio::ssl::context> tls_;
    asio::io_context io_;
    asio::thread_pool handler_pool_;
    asio::strand<asio::io_context::executor_type> accept_strand_;
    tcp::acceptor acceptor_;
    asio::steady_timer retry_timer_;
    asio::steady_timer summary_timer_; // when the refusal log's summary is due
    std::mutex log_mutex_;
    LogRateLimiter refusal_log_;       // guarded by log_mutex_
    bool summary_timer_armed_ = false; // guarded by log_mutex_
    std::atomic<std::size_t> active_sessions_{0};
    SessionContext context_;
    // Keeps io_.run() going while idle (outstanding work), until reset when stopping.
    std::optional<asio::any_io_executor> work_;
    std::vector<std::thread> io_threads_;
    std::atomic<std::uint64_t> next_session_id_{1};
    std::uint16_t port_ = 0;

    mutable std::mutex mutex_;
    std::condition_variable finished_;
    std::map<std::uint64_t, std::weak_ptr<ServerSession>> sessions_; // guarded by mutex_
    bool stopping_ = false;                                          // guarded by mutex_
    // Admission, guarded by mutex_: pending connections by session id (ids grow, so the map
    // is in order of age), their count per source, the peak since the last trim, and the
    // sessions per identity.
    std::map<std::uint64_t, Pending> pending_;
    std::map<std::string, std::size_t, std::less<>> pending_by_source_;
    std::size_t pending_peak_ = 0;
    std::map<std::string, std::size_t, std::less<>> sessions_by_identity_;
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
    acceptor_.async_accept(asio::make_strand(io_),
                           [this](const error_code& ec, tcp::socket socket) {
                               if (ec == asio::error::operation_aborted || !acceptor_.is_open())
                                   return;
                               if (ec) {
                                   // Out of descriptors or memory: existing sessions go on; try
                                   // again shortly rather than spin on a listener that fails at
                                   // once.
                                   logger().warn("control server: accept failed: {}", ec.message());
                                   retry_timer_.expires_after(std::chrono::milliseconds(100));
                                   retry_timer_.async_wait([this](const error_code& timer_ec) {
                                       if (!timer_ec)
                                           accept_next();
                                   });
                                   return;
                               }
                               admit(std::move(socket));
                               accept_next();
                           });
}

void Server::Impl::admit(tcp::socket socket) {
    error_code ec;
    auto remote = socket.remote_endpoint(ec);
    if (ec)
        return; // gone already
    std::string source = remote.address().to_string();
    std::uint64_t id = next_session_id_++;
    std::shared_ptr<ServerSession> victim;
    bool victim_of_source = false; // the victim is the source's own (its per-source limit)
    bool over_total_limit = false;
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return;
        auto from_source = pending_by_source_.find(source);
        std::size_t held = from_source != pending_by_source_.end() ? from_source->second : 0;
        if (held >= config_.max_pending_per_source) {
            // At its source's limit a newcomer takes the place of that source's oldest pending
            // connection: connections that sit idle (a neighbour behind the same address, the
            // same NAT) cannot lock out a client that goes on to authenticate. A flood from the
            // source still holds no more than its limit.
            victim = take_eviction_victim(source);
            victim_of_source = true;
            --held;
        }
        if (!victim_of_source && pending_.size() >= config_.max_pending) {
            // At the total limit a newcomer gets in only from a source holding fewer than the
            // busiest one less one: then the busiest source's oldest pending connection goes.
            // So sources converge on a fair share of the places, a client from a quiet address
            // (holding none) always gets in, and flooders that have their share are refused at
            // once, before any TLS state, instead of evicting each other in a costly churn.
            auto busiest =
                std::max_element(pending_by_source_.begin(), pending_by_source_.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
            over_total_limit = busiest == pending_by_source_.end() || busiest->second <= held + 1;
            if (!over_total_limit)
                victim = take_eviction_victim(busiest->first);
        }
        if (!over_total_limit) {
            ++pending_by_source_[source];
            pending_.emplace(id, Pending{source, {}});
            pending_peak_ = std::max(pending_peak_, pending_.size());
        }
    }
    if (over_total_limit) {
        socket.close(ec);
        log_refusal("over the total pending limit",
                    fmt::format("refused connection from {}: {} connections are waiting for the "
                                "TLS handshake and Hello, the server's limit, and its source "
                                "holds its share of them",
                                source, config_.max_pending));
        return;
    }
    if (victim && victim_of_source) {
        victim->abort(Error(EBUSY, fmt::format("dropped for a newer connection from its source: "
                                               "{} connections from there were waiting for the "
                                               "TLS handshake and Hello, the limit per source",
                                               config_.max_pending_per_source)));
        log_refusal("dropped at the pending limit of its source",
                    fmt::format("dropped the oldest pending connection from {} for a newer one at "
                                "the limit of {} per source address",
                                source, config_.max_pending_per_source));
    } else if (victim) {
        victim->abort(Error(EBUSY, fmt::format("dropped for a newer connection: {} connections "
                                               "were waiting for the TLS handshake and Hello, "
                                               "the server's limit",
                                               config_.max_pending)));
        log_refusal("dropped at the total pending limit",
                    fmt::format("dropped the oldest pending connection of the busiest source at "
                                "the limit of {} pending connections",
                                config_.max_pending));
    }
    auto session = std::make_shared<ServerSession>(context_, id, std::move(socket));
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            pending_.erase(id);
            return; // the session and its socket die here
        }
        if (auto pending = pending_.find(id); pending != pending_.end())
            pending->second.session = session;
        sessions_.emplace(id, session);
    }
    session->start();
}

std::shared_ptr<ServerSession> Server::Impl::take_eviction_victim(std::string source) {
    auto counted = pending_by_source_.find(source);
    if (counted == pending_by_source_.end())
        return nullptr;
    // pending_ is ordered by session id: the first of the source is its oldest.
    for (auto entry = pending_.begin(); entry != pending_.end(); ++entry) {
        if (entry->second.source != source)
            continue;
        auto victim = entry->second.session.lock();
        if (--counted->second == 0)
            pending_by_source_.erase(counted);
        pending_.erase(entry);
        return victim;
    }
    return nullptr;
}

void Server::Impl::left_pending(std::uint64_t id) {
    bool trim = false;
    {
        std::lock_guard lock(mutex_);
        auto entry = pending_.find(id);
        if (entry == pending_.end())
            return;
        auto source = pending_by_source_.find(entry->second.source);
        if (source != pending_by_source_.end() && --source->second == 0)
            pending_by_source_.erase(source);
        pending_.erase(entry);
        if (pending_.empty() && pending_peak_ >= kTrimAfterPendingPeak) {
            trim = true;
            pending_peak_ = 0;
        }
    }
    if (trim) {
        // glibc keeps freed memory of many threads' arenas; hand it back after a flood.
        ::malloc_trim(0);
        logger().debug("control server: pending connections back to none; memory trimmed");
    }
}

void Server::Impl::log_refusal(std::string_view kind, const std::string& line) {
    bool full = false;
    bool arm = false;
    {
        std::lock_guard lock(log_mutex_);
        full = refusal_log_.admit(kind);
        if (!full && !summary_timer_armed_) {
            summary_timer_armed_ = true;
            arm = true;
        }
    }
    if (full)
        logger().warn("{}", line);
    if (arm)
        asio::post(accept_strand_, [this] { arm_summary_timer(); });
}

void Server::Impl::arm_summary_timer() {
    std::optional<std::chrono::steady_clock::time_point> due;
    {
        std::lock_guard lock(log_mutex_);
        due = refusal_log_.summary_due();
        if (!due || !acceptor_.is_open()) {
            summary_timer_armed_ = false;
            return;
        }
    }
    summary_timer_.expires_at(*due);
    summary_timer_.async_wait([this](const error_code& ec) {
        if (ec)
            return; // cancelled: stop() logs what is left
        log_summary();
        arm_summary_timer();
    });
}

void Server::Impl::log_summary(bool final) {
    std::optional<LogRateLimiter::Summary> summary;
    {
        std::lock_guard lock(log_mutex_);
        summary = final ? refusal_log_.flush() : refusal_log_.take_summary();
    }
    if (summary)
        logger().warn("control server: {}", summary->text("refused", "connections"));
}

bool Server::Impl::acquire_identity(const std::string& identity) {
    std::lock_guard lock(mutex_);
    auto& held = sessions_by_identity_[identity];
    if (held >= config_.max_sessions_per_client) {
        if (held == 0)
            sessions_by_identity_.erase(identity);
        return false;
    }
    ++held;
    return true;
}

void Server::Impl::release_identity(const std::string& identity) {
    std::lock_guard lock(mutex_);
    auto held = sessions_by_identity_.find(identity);
    if (held != sessions_by_identity_.end() && --held->second == 0)
        sessions_by_identity_.erase(held);
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
        summary_timer_.cancel();
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
    // Refusals counted but not yet summarized: the last window may not have ended.
    log_summary(true);
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

std::size_t Server::pending_count() const {
    return impl_->pending_count();
}

std::size_t Server::session_count() const {
    return impl_->session_count();
}

void Server::stop() {
    impl_->stop();
}

} // namespace rpmem::channel
