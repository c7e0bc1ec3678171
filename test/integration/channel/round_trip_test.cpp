// SPDX-License-Identifier: BSD-3-Clause
// Request/reply over a real TLS channel on 127.0.0.1: what the client sends is what the handler
// gets, what the handler answers is what the client gets, with the peer's identity, statuses,
// handler failures and closing in both directions.
#include <cerrno>

#include "channel_test_support.h"

using namespace channel_test;
using rpmem::channel::expect;

namespace {

protocol::CreateRequest sample_create() {
    protocol::CreateRequest create;
    create.pool_set = "dir/pool.set";
    create.pool_size = 64 << 20;
    create.lanes = 4;
    create.provider = protocol::ProviderPreference::tcp;
    create.persist_method = protocol::PersistMethod::gpspm;
    create.attributes.signature = {'P', 'M', 'E', 'M', 'O', 'B', 'J', '\0'};
    create.attributes.major = 6;
    create.attributes.uuid.fill(0x42);
    return create;
}

protocol::CreateReply sample_create_reply() {
    protocol::CreateReply reply;
    reply.message = "gpspm: chosen for tcp";
    reply.data_path.provider = "tcp";
    reply.data_path.host = "127.0.0.1";
    reply.data_path.port = 40000;
    reply.data_path.remote_base = 0x7f0000000000;
    reply.data_path.remote_key = 77;
    reply.data_path.lanes = 4;
    reply.data_path.persist_method = protocol::PersistMethod::gpspm;
    reply.data_path.inline_buffer_size = 8192;
    reply.data_path.pool_size = 64 << 20;
    reply.data_path.token.fill(0xee);
    return reply;
}

} // namespace

TEST_CASE("a request reaches the handler and its reply the client, unchanged") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server =
        start_server(server_config(files), recording_factory(log, [](const auto& request) {
                         if (std::holds_alternative<protocol::CreateRequest>(request))
                             return protocol::Reply(sample_create_reply());
                         return RecordingHandler::echo(request);
                     }));
    auto client = connect_client(client_config(files, server->port()));

    // The Hello exchange told each side who the other is.
    CHECK(client->hello().identity == "alice");
    CHECK(client->hello().version == protocol::kProtocolVersion);
    CHECK(client->hello().software == "test server");
    CHECK(client->hello().heartbeat_timeout_ms == 10000);
    REQUIRE(log->wait([](auto& l) { return l.opened.size() == 1; }));
    CHECK(log->opened[0].identity == "alice");
    CHECK(log->opened[0].address == "127.0.0.1");
    CHECK(log->opened[0].session_id == client->hello().session_id);
    CHECK(server->session_count() == 1);

    auto reply = expect<protocol::CreateReply>(client->call(sample_create()), "create");
    REQUIRE(reply);
    CHECK(*reply == sample_create_reply());
    REQUIRE(log->wait([](auto& l) { return l.requests.size() == 1; }));
    CHECK(log->requests[0] == protocol::Request(sample_create()));

    auto removed = client->call(protocol::RemoveRequest{"x.set", true, false});
    REQUIRE(removed);
    CHECK(std::get<protocol::RemoveReply>(*removed).message == "x.set");
}

TEST_CASE("a failed status travels back and maps onto its errno") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log, [](const auto& r) {
                                   return protocol::failure_reply(
                                       protocol::type_of(r), protocol::Status::busy,
                                       "pool set dir/pool.set is in use by session 3");
                               }));
    auto client = connect_client(client_config(files, server->port()));

    auto reply = client->call(protocol::OpenRequest{"dir/pool.set", 1 << 20, 1, {}, {}});
    REQUIRE(reply); // a reply is a reply, whatever its status
    CHECK(protocol::reply_status(*reply) == protocol::Status::busy);

    auto opened = expect<protocol::OpenReply>(std::move(reply), "opening dir/pool.set");
    REQUIRE_FALSE(opened);
    CHECK(opened.error().errno_value() == EBUSY);
    CHECK(opened.error().source() == rpmem::ErrorSource::remote);
    CHECK(opened.error().message() ==
          "opening dir/pool.set: pool set dir/pool.set is in use by session 3");
    CHECK_FALSE(client->failure()); // the channel is fine
}

TEST_CASE("a handler that throws or answers with the wrong type yields a fatal reply") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server =
        start_server(server_config(files), recording_factory(log, [](const auto& request) {
                         if (std::holds_alternative<protocol::CloseRequest>(request))
                             throw std::runtime_error("boom");
                         return protocol::Reply(protocol::Pong{}); // never right for a request
                     }));
    auto client = connect_client(client_config(files, server->port()));

    auto closed = expect<protocol::CloseReply>(client->call(protocol::CloseRequest{}), "close");
    REQUIRE_FALSE(closed);
    CHECK(closed.error().errno_value() == EREMOTEIO);
    auto status = expect<protocol::StatusReply>(client->call(protocol::StatusRequest{}), "status");
    REQUIRE_FALSE(status);
    CHECK(status.error().errno_value() == EREMOTEIO);
    CHECK_FALSE(client->failure()); // and the session goes on
}

TEST_CASE("hello and ping belong to the channel") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));
    auto client = connect_client(client_config(files, server->port()));
    for (protocol::Request request :
         {protocol::Request(protocol::Hello{}), protocol::Request(protocol::Ping{})}) {
        auto reply = client->call(request);
        REQUIRE_FALSE(reply);
        CHECK(reply.error().errno_value() == EINVAL);
    }
}

TEST_CASE("closing the client ends the session on the server") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));
    auto client = connect_client(client_config(files, server->port()));
    REQUIRE(client->call(protocol::StatusRequest{}));

    client->close();
    REQUIRE(log->wait([](auto& l) { return l.closed.size() == 1; }));
    // The client's close_notify tells a meant end from a lost connection (ECONNRESET).
    CHECK(log->closed[0].errno_value() == ENOTCONN);
    CHECK_THAT(log->closed[0].message(), Catch::Contains("the client closed the channel"));
    auto after = client->call(protocol::StatusRequest{});
    REQUIRE_FALSE(after);
    CHECK(after.error().errno_value() == ENOTCONN);
    client->close(); // idempotent
}

TEST_CASE("stopping the server ends every session and the clients notice") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));

    std::mutex mutex;
    std::condition_variable cv;
    std::vector<Error> failures;
    ClientConfig config = client_config(files, server->port());
    config.on_failure = [&](const Error& error) {
        {
            std::lock_guard lock(mutex);
            failures.push_back(error);
        }
        cv.notify_all();
    };
    auto first = connect_client(config);
    auto second = connect_client(config);
    REQUIRE(log->wait([](auto& l) { return l.opened.size() == 2; }));

    server->stop();
    // stop() returns after every on_close has run.
    CHECK(log->closed.size() == 2);
    for (const auto& reason : log->closed)
        CHECK(reason.errno_value() == ESHUTDOWN);
    CHECK(server->session_count() == 0);

    REQUIRE(wait_until(mutex, cv, [&] { return failures.size() == 2; }));
    for (const auto& failure : failures) {
        CHECK(failure.errno_value() == ECONNRESET);
        CHECK_THAT(failure.message(), Catch::Contains("control channel to 127.0.0.1:"));
    }
    auto after = first->call(protocol::StatusRequest{});
    REQUIRE_FALSE(after);
    CHECK(after.error().errno_value() == ECONNRESET);
}

TEST_CASE("connecting to a port nobody listens on fails with ECONNREFUSED") {
    TempDir dir;
    auto files = make_credentials(dir);
    // Bind a port, then free it: nothing listens there afterwards.
    std::uint16_t port = 0;
    {
        asio::io_context io;
        asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
        port = acceptor.local_endpoint().port();
    }
    auto client = rpmem::channel::Client::connect(client_config(files, port));
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == ECONNREFUSED);
    CHECK_THAT(client.error().message(),
               Catch::StartsWith("connecting to 127.0.0.1:" + std::to_string(port)));
}

TEST_CASE("a server that accepts but never handshakes runs into the client's deadline") {
    TempDir dir;
    auto files = make_credentials(dir);
    asio::io_context io;
    asio::ip::tcp::acceptor silent(io, {asio::ip::make_address("127.0.0.1"), 0});
    ClientConfig config = client_config(files, silent.local_endpoint().port());
    config.handshake_timeout = 300ms;
    auto client = rpmem::channel::Client::connect(config);
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == ETIMEDOUT);
    CHECK_THAT(client.error().message(), Catch::Contains("TLS handshake with 127.0.0.1:") &&
                                             Catch::Contains("not completed within 300 ms"));
}
