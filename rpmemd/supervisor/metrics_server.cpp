// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/metrics_server.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
// GCC 12 with sanitizers reports a false maybe-uninitialized inside Beast's header parser
// (a boost::optional member); silence just that, just for Beast.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#pragma GCC diagnostic pop
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rpmem::daemon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::chrono::seconds kConnectionDeadline{5};
constexpr std::size_t kMaxRequestBytes = 8 * 1024;

} // namespace

class MetricsServer::Impl : public std::enable_shared_from_this<MetricsServer::Impl> {
public:
    explicit Impl(std::function<std::string()> render)
        : render_(std::move(render))
        , acceptor_(io_) {}

    Result<void> listen(const std::string& host, std::uint16_t port) {
        boost::system::error_code ec;
        auto address = asio::ip::make_address(host, ec);
        if (ec)
            return fail(EINVAL, fmt::format("metrics-listen: '{}' is not an IP address", host));
        tcp::endpoint endpoint(address, port);
        acceptor_.open(endpoint.protocol(), ec);
        if (!ec)
            acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
        if (!ec)
            acceptor_.bind(endpoint, ec);
        if (!ec)
            acceptor_.listen(asio::socket_base::max_listen_connections, ec);
        if (ec)
            return fail(Error::from_errno(
                ec.value(), fmt::format("metrics-listen {}:{}: {}", host, port, ec.message())));
        port_ = acceptor_.local_endpoint().port();
        return {};
    }

    void run() {
        accept_next();
        thread_ = std::thread([self = shared_from_this()] { self->io_.run(); });
    }

    // Closes the listener and every connection on the I/O thread; run() then returns once
    // their handlers have seen the errors and let go of them (no handler keeps this alive).
    void stop() {
        if (stopped_.exchange(true))
            return;
        asio::post(io_, [self = shared_from_this()] {
            boost::system::error_code ignored;
            self->acceptor_.close(ignored);
            for (auto& weak : self->connections_)
                if (auto connection = weak.lock())
                    connection->stream.socket().close(ignored);
        });
        if (thread_.joinable())
            thread_.join();
    }

    std::uint16_t port() const noexcept { return port_; }

private:
    // One HTTP connection: read a request, answer it, keep alive while the client wants.
    struct Connection : std::enable_shared_from_this<Connection> {
        Connection(std::shared_ptr<Impl> server, tcp::socket socket)
            : owner(std::move(server))
            , stream(std::move(socket)) {}

        void read() {
            parser.emplace();
            parser->body_limit(kMaxRequestBytes);
            parser->header_limit(kMaxRequestBytes);
            stream.expires_after(kConnectionDeadline);
            http::async_read(stream, buffer, *parser,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                 if (!ec)
                                     self->answer(self->parser->release());
                             });
        }

        void answer(http::request<http::string_body> request) {
            response = {};
            response.version(request.version());
            response.keep_alive(request.keep_alive());
            response.set(http::field::server, "rpmemd");
            if (request.target() != "/metrics") {
                response.result(http::status::not_found);
                response.set(http::field::content_type, "text/plain; charset=utf-8");
                response.body() = "only /metrics is served here\n";
            } else if (request.method() != http::verb::get &&
                       request.method() != http::verb::head) {
                response.result(http::status::method_not_allowed);
                response.set(http::field::allow, "GET, HEAD");
                response.set(http::field::content_type, "text/plain; charset=utf-8");
                response.body() = "use GET\n";
            } else {
                response.result(http::status::ok);
                response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
                if (request.method() == http::verb::get)
                    response.body() = owner->render_();
            }
            response.prepare_payload();
            stream.expires_after(kConnectionDeadline);
            http::async_write(stream, response,
                              [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                  if (!ec && self->response.keep_alive())
                                      self->read();
                              });
        }

        std::shared_ptr<Impl> owner;
        beast::tcp_stream stream;
        beast::flat_buffer buffer;
        std::optional<http::request_parser<http::string_body>> parser;
        http::response<http::string_body> response;
    };

    // Everything runs on the one I/O thread, so connections_ needs no lock.
    void accept_next() {
        acceptor_.async_accept([self = shared_from_this()](boost::system::error_code ec,
                                                           tcp::socket socket) {
            if (ec == asio::error::operation_aborted || !self->acceptor_.is_open())
                return;
            if (!ec) {
                std::erase_if(self->connections_, [](const auto& weak) { return weak.expired(); });
                // Over the limit the connection is closed at once: scrapers retry, and a
                // flood cannot hold more than the limit.
                if (self->connections_.size() < kMaxConnections) {
                    auto connection = std::make_shared<Connection>(self, std::move(socket));
                    self->connections_.push_back(connection);
                    connection->read();
                } else {
                    spdlog::debug("metrics: connection refused, {} open already", kMaxConnections);
                }
            }
            self->accept_next();
        });
    }

    std::function<std::string()> render_;
    asio::io_context io_{1};
    tcp::acceptor acceptor_;
    std::thread thread_;
    std::vector<std::weak_ptr<Connection>> connections_; // on the I/O thread only
    std::atomic<bool> stopped_{false};
    std::uint16_t port_ = 0;
};

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& host,
                                                            std::uint16_t port,
                                                            std::function<std::string()> render) {
    auto impl = std::make_shared<Impl>(std::move(render));
    if (auto listening = impl->listen(host, port); !listening)
        return fail(std::move(listening.error()));
    impl->run();
    return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

MetricsServer::MetricsServer(std::shared_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() {
    stop();
}

std::uint16_t MetricsServer::port() const noexcept {
    return impl_->port();
}

void MetricsServer::stop() {
    impl_->stop();
}

} // namespace rpmem::daemon
