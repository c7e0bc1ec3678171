// SPDX-License-Identifier: BSD-3-Clause
// Shared by the channel integration tests: temporary credentials, a recording session handler,
// waiting on conditions with deadlines, and a raw TLS client that can send any bytes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <stdlib.h>

#include "channel/client.h"
#include "channel/credentials.h"
#include "channel/frame_reader.h"
#include "channel/server.h"
#include "channel/tls_context.h"
#include "protocol/codec.h"
#include "temp_dir.h"

namespace channel_test {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace protocol = rpmem::protocol;
using rpmem::Error;
using rpmem::channel::ClientConfig;
using rpmem::channel::CredentialFiles;
using rpmem::channel::ServerConfig;

// Generous: the machine is small and shared, the tests run under ASan. Waits end as soon as
// their condition holds, so this only bounds how long a broken test takes to fail.
constexpr auto kPatience = 30s;

using rpmem::test::TempDir;

// A CA, a server certificate for localhost/127.0.0.1 and a client certificate for `identity`,
// written under `dir/name`.
inline CredentialFiles make_credentials(const TempDir& dir, const std::string& name = "tls",
                                        const std::string& identity = "alice") {
    rpmem::channel::CredentialOptions options;
    options.server_names = {"localhost", "127.0.0.1"};
    options.client_identity = identity;
    auto files = rpmem::channel::write_credentials(dir.path() / name, options);
    REQUIRE(files);
    return *files;
}

// Runs `predicate` under `mutex` until it holds or `timeout` passes.
template <typename Predicate>
bool wait_until(std::mutex& mutex, std::condition_variable& cv, Predicate predicate,
                std::chrono::steady_clock::duration timeout = kPatience) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, timeout, predicate);
}

// What the sessions of a test did, shared by all their handlers.
struct SessionLog {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<rpmem::channel::PeerInfo> opened;
    std::vector<protocol::Request> requests;
    std::vector<Error> closed;

    template <typename Predicate>
    bool wait(Predicate predicate, std::chrono::steady_clock::duration timeout = kPatience) {
        return wait_until(
            mutex, changed, [&] { return predicate(*this); }, timeout);
    }
};

// A session handler that records everything in a SessionLog and answers with `respond`
// (default: an ok reply of the right type that echoes a little of the request).
class RecordingHandler : public rpmem::channel::SessionHandler {
public:
    using Responder = std::function<protocol::Reply(const protocol::Request&)>;

    RecordingHandler(std::shared_ptr<SessionLog> log, Responder respond)
        : log_(std::move(log))
        , respond_(std::move(respond)) {}

    protocol::Reply handle(const protocol::Request& request) override {
        {
            std::lock_guard lock(log_->mutex);
            log_->requests.push_back(request);
        }
        log_->changed.notify_all();
        return respond_ ? respond_(request) : echo(request);
    }

    void on_close(const Error& reason) noexcept override {
        {
            std::lock_guard lock(log_->mutex);
            log_->closed.push_back(reason);
        }
        log_->changed.notify_all();
    }

    // RemoveRequest -> RemoveReply whose message is the pool set name; anything else -> an ok
    // reply of the answering type.
    static protocol::Reply echo(const protocol::Request& request) {
        if (const auto* remove = std::get_if<protocol::RemoveRequest>(&request))
            return protocol::RemoveReply{protocol::Status::ok, remove->pool_set};
        protocol::Reply reply =
            protocol::failure_reply(protocol::type_of(request), protocol::Status::ok, "");
        return reply;
    }

private:
    std::shared_ptr<SessionLog> log_;
    Responder respond_;
};

inline rpmem::channel::SessionFactory recording_factory(std::shared_ptr<SessionLog> log,
                                                        RecordingHandler::Responder respond = {}) {
    return [log, respond](const rpmem::channel::PeerInfo& peer)
               -> rpmem::Result<std::unique_ptr<rpmem::channel::SessionHandler>> {
        {
            std::lock_guard lock(log->mutex);
            log->opened.push_back(peer);
        }
        log->changed.notify_all();
        return std::make_unique<RecordingHandler>(log, respond);
    };
}

inline ServerConfig server_config(const CredentialFiles& files) {
    ServerConfig config;
    config.address = "127.0.0.1";
    config.port = 0;
    config.tls = files.server();
    config.handshake_timeout = 10s;
    config.heartbeat_timeout = 10s;
    config.io_threads = 2;
    config.handler_threads = 2;
    config.software = "test server";
    return config;
}

inline ClientConfig client_config(const CredentialFiles& files, std::uint16_t port) {
    ClientConfig config;
    config.host = "127.0.0.1";
    config.port = port;
    config.tls = files.client();
    config.connect_timeout = 10s;
    config.handshake_timeout = 10s;
    config.request_timeout = 20s;
    config.heartbeat_interval = 1s;
    config.heartbeat_timeout = 8s;
    config.software = "test client";
    return config;
}

inline std::unique_ptr<rpmem::channel::Server>
start_server(ServerConfig config, rpmem::channel::SessionFactory factory) {
    auto server = rpmem::channel::Server::start(std::move(config), std::move(factory));
    if (!server)
        FAIL(server.error().message());
    REQUIRE(server);
    REQUIRE((*server)->port() != 0);
    return std::move(*server);
}

inline std::unique_ptr<rpmem::channel::Client> connect_client(ClientConfig config) {
    auto client = rpmem::channel::Client::connect(std::move(config));
    if (!client)
        FAIL(client.error().message());
    return std::move(*client);
}

// Records the server's refusals.
struct RefusalLog {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<rpmem::channel::Refusal> refusals;

    rpmem::channel::RefusalObserver observer() {
        return [this](const rpmem::channel::Refusal& refusal) {
            {
                std::lock_guard lock(mutex);
                refusals.push_back(refusal);
            }
            changed.notify_all();
        };
    }

    // Waits for the first refusal and returns it.
    rpmem::channel::Refusal first() {
        REQUIRE(wait_until(mutex, changed, [this] { return !refusals.empty(); }));
        std::lock_guard lock(mutex);
        return refusals.front();
    }
};

// A TLS client that sends whatever bytes a test wants, on its own io_context run from the
// test's thread with deadlines.
class RawTlsClient {
public:
    explicit RawTlsClient(const rpmem::channel::TlsFiles& files) {
        auto context = rpmem::channel::make_tls_context(files, rpmem::channel::TlsRole::client);
        REQUIRE(context);
        tls_ = std::move(*context);
        stream_.emplace(io_, *tls_);
    }

    // Connects and handshakes with 127.0.0.1:port.
    void connect(std::uint16_t port) {
        asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
        boost::system::error_code ec;
        stream_->lowest_layer().connect(endpoint, ec);
        REQUIRE_FALSE(ec);
        SSL_set1_host(stream_->native_handle(), "127.0.0.1");
        bool done = false;
        stream_->async_handshake(asio::ssl::stream_base::client,
                                 [&](const boost::system::error_code& e) {
                                     ec = e;
                                     done = true;
                                 });
        run([&] { return done; });
        REQUIRE(done);
        INFO(ec.message());
        REQUIRE_FALSE(ec);
    }

    // Connects and completes the Hello exchange.
    protocol::HelloReply connect_and_hello(std::uint16_t port) {
        connect(port);
        send(protocol::Request(protocol::Hello{}), 0);
        auto reply = read_reply();
        REQUIRE(reply);
        REQUIRE(std::holds_alternative<protocol::HelloReply>(reply->message));
        auto hello = std::get<protocol::HelloReply>(reply->message);
        REQUIRE(hello.status == protocol::Status::ok);
        return hello;
    }

    void send(const protocol::Request& request, std::uint32_t id) {
        auto frame = protocol::encode(request, id);
        REQUIRE(frame);
        write(*frame);
    }

    void write(const std::vector<std::uint8_t>& bytes) {
        boost::system::error_code ec;
        bool done = false;
        asio::async_write(*stream_, asio::buffer(bytes),
                          [&](const boost::system::error_code& e, std::size_t) {
                              ec = e;
                              done = true;
                          });
        run([&] { return done; });
        REQUIRE(done);
        REQUIRE_FALSE(ec);
    }

    // The next reply frame; an error when the server closed the connection instead.
    rpmem::Result<protocol::DecodedFrame<protocol::Reply>> read_reply() {
        boost::system::error_code ec;
        bool done = false;
        rpmem::channel::async_read_frame(*stream_, buffer_,
                                         [&](const boost::system::error_code& e) {
                                             ec = e;
                                             done = true;
                                         });
        run([&] { return done; });
        REQUIRE(done);
        if (ec) {
            // Like a real client: once the server has gone, close our end too.
            boost::system::error_code ignored;
            stream_->lowest_layer().close(ignored);
            return rpmem::fail(ECONNRESET, "read: " + ec.message());
        }
        REQUIRE_FALSE(buffer_.header_error);
        auto reply = protocol::decode_reply(buffer_.header, buffer_.body);
        REQUIRE(reply);
        return protocol::DecodedFrame<protocol::Reply>{buffer_.header.request_id, *reply};
    }

    // Shuts down our sending direction at the TCP level (a frame cut short).
    void shutdown_send() {
        boost::system::error_code ignored;
        stream_->lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    }

private:
    template <typename Done>
    void run(Done done) {
        io_.restart();
        auto deadline = std::chrono::steady_clock::now() + kPatience;
        while (!done() && io_.run_one_until(deadline) != 0) {
        }
    }

    asio::io_context io_;
    std::unique_ptr<asio::ssl::context> tls_;
    std::optional<asio::ssl::stream<asio::ip::tcp::socket>> stream_;
    rpmem::channel::FrameBuffer buffer_;
};

} // namespace channel_test
