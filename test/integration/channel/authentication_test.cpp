// SPDX-License-Identifier: BSD-3-Clause
// Who may talk to whom: mutual TLS with certificates made for each test. Every refusal must be
// clear on both sides: the client's error says what was wrong, the server reports a Refusal.
#include <cerrno>

#include "channel_test_support.h"

using namespace channel_test;
using rpmem::channel::CertifiedKey;
using rpmem::channel::Validity;
namespace fs = std::filesystem;

namespace {

// Credentials from explicit parts, for the cases write_credentials() does not make.
struct CustomPki {
    explicit CustomPki(const TempDir& dir, const std::string& name = "custom")
        : directory(dir.path() / name) {
        fs::create_directories(directory);
        auto made =
            rpmem::channel::make_certificate_authority("custom CA", Validity::days_from_now(1));
        REQUIRE(made);
        ca.emplace(std::move(*made));
        REQUIRE(ca->write_certificate(directory / "ca.crt", false));
    }

    // Writes NAME.crt and NAME.key for a server certificate and returns their TlsFiles.
    rpmem::channel::TlsFiles server(const std::string& name, const Validity& validity) {
        auto cert = rpmem::channel::make_server_certificate(
            *ca, std::vector<std::string>{"localhost", "127.0.0.1"}, validity);
        REQUIRE(cert);
        REQUIRE(cert->write(directory / (name + ".crt"), directory / (name + ".key"), false));
        return {directory / "ca.crt", directory / (name + ".crt"), directory / (name + ".key")};
    }

    rpmem::channel::TlsFiles client(const std::string& name, const std::string& identity,
                                    const Validity& validity) {
        auto cert = rpmem::channel::make_client_certificate(*ca, identity, validity);
        REQUIRE(cert);
        REQUIRE(cert->write(directory / (name + ".crt"), directory / (name + ".key"), false));
        return {directory / "ca.crt", directory / (name + ".crt"), directory / (name + ".key")};
    }

    fs::path directory;
    std::optional<CertifiedKey> ca;
};

Validity expired() {
    auto now = std::chrono::system_clock::now();
    return {now - std::chrono::hours(48), now - std::chrono::hours(24)};
}

// Runs a server with `server_tls`, connects with `client_config`, expects the connection
// refused with `errno_value`, and returns the client's error and the server's refusal.
struct Outcome {
    Error client;
    std::optional<rpmem::channel::Refusal> server;
};

Outcome refused_connection(ServerConfig server_config, ClientConfig config, int errno_value,
                           bool server_sees_it = true) {
    RefusalLog refusals;
    server_config.on_refusal = refusals.observer();
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config, recording_factory(log));
    config.port = server->port();
    auto client = rpmem::channel::Client::connect(config);
    REQUIRE_FALSE(client);
    INFO("client: " << client.error().message());
    CHECK(client.error().errno_value() == errno_value);
    Outcome outcome{client.error(), std::nullopt};
    if (server_sees_it) {
        outcome.server = refusals.first();
        INFO("server: " << outcome.server->reason.message());
        CHECK_THAT(outcome.server->peer, Catch::StartsWith("127.0.0.1:"));
    }
    CHECK(log->opened.empty()); // no session was made for a refused client
    return outcome;
}

} // namespace

TEST_CASE("a client that does not trust the server's CA refuses it") {
    TempDir dir;
    auto files = make_credentials(dir, "ours");
    auto other = make_credentials(dir, "theirs");
    ClientConfig config = client_config(files, 0);
    config.tls.ca = other.ca_certificate;
    auto outcome = refused_connection(server_config(files), config, EACCES);
    // The server sends its CA along (OpenSSL builds the chain), which the client finds
    // self-signed and not its own.
    CHECK_THAT(outcome.client.message(),
               Catch::Contains("server certificate rejected: self-signed certificate in "
                               "certificate chain"));
    CHECK(outcome.server->reason.errno_value() == EACCES);
    CHECK_THAT(outcome.server->reason.message(), Catch::Contains("unknown ca"));
}

TEST_CASE("a client certificate from another CA is refused by the server") {
    TempDir dir;
    auto files = make_credentials(dir, "ours");
    auto other = make_credentials(dir, "theirs");
    ClientConfig config = client_config(files, 0);
    config.tls.certificate = other.client_certificate;
    config.tls.private_key = other.client_key;
    auto outcome = refused_connection(server_config(files), config, EACCES);
    CHECK_THAT(outcome.client.message(),
               Catch::Contains("refused by the server") && Catch::Contains("unknown ca"));
    CHECK(outcome.server->reason.errno_value() == EACCES);
    CHECK_THAT(outcome.server->reason.message(),
               Catch::Contains("client certificate rejected: unable to get local issuer "
                               "certificate"));
    CHECK(outcome.server->identity.empty());
}

TEST_CASE("a client without a certificate is refused") {
    TempDir dir;
    auto files = make_credentials(dir);
    ClientConfig config = client_config(files, 0);
    config.tls.certificate.clear();
    config.tls.private_key.clear();
    auto outcome = refused_connection(server_config(files), config, EACCES);
    CHECK_THAT(outcome.client.message(), Catch::Contains("refused by the server") &&
                                             Catch::Contains("certificate required") &&
                                             Catch::Contains("(certificate none)"));
    CHECK(outcome.server->reason.errno_value() == EACCES);
    CHECK_THAT(outcome.server->reason.message(),
               Catch::Contains("peer did not return a certificate"));
}

TEST_CASE("an expired client certificate is refused") {
    TempDir dir;
    CustomPki pki(dir);
    ServerConfig server = server_config(make_credentials(dir));
    server.tls = pki.server("server", Validity::days_from_now(1));
    ClientConfig config = client_config(make_credentials(dir, "unused"), 0);
    config.tls = pki.client("old-client", "alice", expired());
    auto outcome = refused_connection(server, config, EACCES);
    CHECK_THAT(outcome.client.message(),
               Catch::Contains("refused by the server") && Catch::Contains("certificate expired"));
    CHECK_THAT(outcome.server->reason.message(),
               Catch::Contains("client certificate rejected: certificate has expired"));
}

TEST_CASE("an expired server certificate is refused by the client") {
    TempDir dir;
    CustomPki pki(dir);
    ServerConfig server = server_config(make_credentials(dir));
    server.tls = pki.server("old-server", expired());
    ClientConfig config = client_config(make_credentials(dir, "unused"), 0);
    config.tls = pki.client("client", "alice", Validity::days_from_now(1));
    auto outcome = refused_connection(server, config, EACCES);
    CHECK_THAT(outcome.client.message(),
               Catch::Contains("server certificate rejected: certificate has expired"));
    CHECK_THAT(outcome.server->reason.message(), Catch::Contains("certificate expired"));
}

TEST_CASE("a server certificate without the dialled name is refused by the client") {
    TempDir dir;
    auto files = make_credentials(dir);
    ClientConfig config = client_config(files, 0);
    config.server_name = "db.example";
    auto outcome = refused_connection(server_config(files), config, EACCES);
    CHECK_THAT(outcome.client.message(),
               Catch::Contains("server certificate rejected: hostname mismatch") &&
                   Catch::Contains("expected server name 'db.example'"));
    CHECK(outcome.server->reason.errno_value() == EACCES);

    // The names the certificate does carry are accepted.
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));
    for (std::string name : {"localhost", "127.0.0.1"}) {
        config.port = server->port();
        config.server_name = name;
        CHECK(rpmem::channel::Client::connect(config));
    }
}

TEST_CASE("an identity not on the allow list is refused with EPERM") {
    TempDir dir;
    auto files = make_credentials(dir, "tls", "mallory");
    ServerConfig server = server_config(files);
    server.check_identity = [](const rpmem::channel::PeerInfo& peer) -> rpmem::Result<void> {
        if (peer.identity == "alice" || peer.identity == "bob")
            return {};
        return rpmem::fail(EPERM, "allowed are alice and bob");
    };
    auto outcome = refused_connection(server, client_config(files, 0), EPERM);
    CHECK(outcome.client.source() == rpmem::ErrorSource::remote);
    CHECK_THAT(outcome.client.message(),
               Catch::Contains("refused the session: identity 'mallory' is not allowed: allowed "
                               "are alice and bob"));
    CHECK(outcome.server->identity == "mallory");
    CHECK(outcome.server->reason.errno_value() == EPERM);

    auto allowed = make_credentials(dir, "alice-tls", "alice");
    ServerConfig alice_server = server;
    alice_server.tls = allowed.server();
    auto log = std::make_shared<SessionLog>();
    auto running = start_server(alice_server, recording_factory(log));
    CHECK(rpmem::channel::Client::connect(client_config(allowed, running->port())));
}

TEST_CASE("a session refused by the factory reports the factory's errno") {
    TempDir dir;
    auto files = make_credentials(dir);
    RefusalLog refusals;
    ServerConfig config = server_config(files);
    config.on_refusal = refusals.observer();
    auto server =
        start_server(config,
                     [](const rpmem::channel::PeerInfo& peer)
                         -> rpmem::Result<std::unique_ptr<rpmem::channel::SessionHandler>> {
                         return rpmem::fail(EACCES, "no pool set directory for " + peer.identity);
                     });
    auto client = rpmem::channel::Client::connect(client_config(files, server->port()));
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == EACCES);
    CHECK_THAT(client.error().message(), Catch::EndsWith("no pool set directory for alice"));
    CHECK(refusals.first().reason.errno_value() == EACCES);
}

TEST_CASE("no common protocol version gets a clear reply, not a dropped connection") {
    TempDir dir;
    auto files = make_credentials(dir);
    RefusalLog refusals;
    ServerConfig config = server_config(files);
    config.on_refusal = refusals.observer();
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(config, recording_factory(log));

    RawTlsClient raw(files.client());
    raw.connect(server->port());
    raw.send(protocol::Request(protocol::Hello{3, 4, 0, "future client"}), 5);
    auto reply = raw.read_reply();
    REQUIRE(reply);
    CHECK(reply->request_id == 5);
    REQUIRE(std::holds_alternative<protocol::HelloReply>(reply->message));
    const auto& hello = std::get<protocol::HelloReply>(reply->message);
    CHECK(hello.status == protocol::Status::protocol_mismatch);
    CHECK(protocol::errno_of(hello.status) == EPROTONOSUPPORT);
    CHECK(hello.message == "no common protocol version: the client speaks 3..4, this server 2..2");
    CHECK(hello.identity == "alice");
    CHECK_FALSE(raw.read_reply()); // then the server closes
    CHECK(refusals.first().reason.errno_value() == EPROTONOSUPPORT);
}

TEST_CASE("a first frame other than hello is refused") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));
    RawTlsClient raw(files.client());
    raw.connect(server->port());
    raw.send(protocol::Request(protocol::StatusRequest{}), 1);
    auto reply = raw.read_reply();
    REQUIRE(reply);
    REQUIRE(std::holds_alternative<protocol::ErrorReply>(reply->message));
    CHECK(std::get<protocol::ErrorReply>(reply->message).message == "expected hello, got status");
    CHECK_FALSE(raw.read_reply());
    CHECK(log->opened.empty());
}

TEST_CASE("a connection that never handshakes is dropped at the handshake deadline") {
    TempDir dir;
    auto files = make_credentials(dir);
    RefusalLog refusals;
    ServerConfig config = server_config(files);
    config.handshake_timeout = 300ms;
    config.on_refusal = refusals.observer();
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(config, recording_factory(log));

    asio::io_context io;
    asio::ip::tcp::socket idle(io);
    idle.connect({asio::ip::make_address("127.0.0.1"), server->port()});
    auto refusal = refusals.first();
    CHECK(refusal.reason.errno_value() == ETIMEDOUT);
    CHECK(refusal.reason.message() == "no TLS handshake and Hello within 300 ms");
    // And the connection is gone: reading ends.
    std::array<char, 16> buffer{};
    boost::system::error_code ec;
    idle.read_some(asio::buffer(buffer), ec);
    CHECK(ec);

    // Meanwhile and afterwards, honest clients are served.
    CHECK(rpmem::channel::Client::connect(client_config(files, server->port())));
}

TEST_CASE("a peer offering fewer capabilities, or newer versions too, gets what both share") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));
    const auto heartbeat = static_cast<std::uint64_t>(protocol::Capability::heartbeat);
    struct Case {
        protocol::Hello hello;
        std::uint64_t shared;
    };
    for (const Case& c :
         {Case{{2, 9, heartbeat, "newer client"}, heartbeat}, Case{{2, 2, 0, "minimal client"}, 0},
          Case{{2, 2, ~0ULL, "client of features unknown here"}, protocol::kCapabilities}}) {
        INFO(c.hello.software);
        RawTlsClient raw(files.client());
        raw.connect(server->port());
        raw.send(protocol::Request(c.hello), 1);
        auto reply = raw.read_reply();
        REQUIRE(reply);
        const auto* answer = std::get_if<protocol::HelloReply>(&reply->message);
        REQUIRE(answer != nullptr);
        CHECK(answer->status == protocol::Status::ok);
        CHECK(answer->version == protocol::kProtocolVersion); // the highest both speak
        CHECK(answer->capabilities == c.shared);
    }
}
