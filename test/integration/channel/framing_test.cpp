// SPDX-License-Identifier: BSD-3-Clause
// Bytes that are not a valid frame, sent by a raw TLS client after (or instead of) the Hello:
// the server answers with an ErrorReply or disconnects, the misbehaving session ends or goes
// on as the protocol says, and an honest client on the same server keeps being served.
#include <cerrno>
#include <latch>

#include "channel_test_support.h"

using namespace channel_test;

namespace {

std::vector<std::uint8_t> header(protocol::MessageType type, std::uint32_t id,
                                 std::uint32_t body_length,
                                 std::uint16_t version = protocol::kProtocolVersion) {
    auto bytes = protocol::encode_frame_header({version, type, id, body_length});
    return {bytes.begin(), bytes.end()};
}

protocol::ErrorReply expect_error_reply(RawTlsClient& raw, std::uint32_t id) {
    auto reply = raw.read_reply();
    REQUIRE(reply);
    CHECK(reply->request_id == id);
    REQUIRE(std::holds_alternative<protocol::ErrorReply>(reply->message));
    return std::get<protocol::ErrorReply>(reply->message);
}

// A server, a session log and an honest client that must stay unaffected.
struct Fixture {
    explicit Fixture(std::chrono::milliseconds heartbeat = 10s,
                     RecordingHandler::Responder respond = {}) {
        ServerConfig config = server_config(files);
        config.heartbeat_timeout = heartbeat;
        server = start_server(config, recording_factory(log, std::move(respond)));
        honest = connect_client(client_config(files, server->port()));
        REQUIRE(log->wait([](auto& l) { return l.opened.size() == 1; }));
    }

    // The honest client still gets answers; the misbehaving session has ended with errno.
    void check_honest_client_served() {
        auto reply = honest->call(protocol::RemoveRequest{"still-here.set", false, false});
        REQUIRE(reply);
        CHECK(std::get<protocol::RemoveReply>(*reply).message == "still-here.set");
    }

    void check_raw_session_closed(int errno_value) {
        REQUIRE(log->wait([](auto& l) { return l.closed.size() == 1; }));
        CHECK(log->closed[0].errno_value() == errno_value);
        CHECK_FALSE(honest->failure());
    }

    // The end of a session refused after its error reply: nothing more to read, the session
    // closed with errno_value, the honest client still served.
    void check_hung_up(RawTlsClient& raw, int errno_value) {
        CHECK_FALSE(raw.read_reply());
        check_raw_session_closed(errno_value);
        check_honest_client_served();
    }

    TempDir dir;
    CredentialFiles files = make_credentials(dir);
    std::shared_ptr<SessionLog> log = std::make_shared<SessionLog>();
    std::unique_ptr<rpmem::channel::Server> server;
    std::unique_ptr<rpmem::channel::Client> honest;
};

} // namespace

TEST_CASE("garbage gets an error reply and a disconnect") {
    Fixture fixture;
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    std::vector<std::uint8_t> garbage(64, 'G');
    raw.write(garbage);
    auto error = expect_error_reply(raw, 0x47474747);
    CHECK(error.status == protocol::Status::bad_message);
    CHECK(error.message == "frame header: bad magic 47 47 47 47");
    fixture.check_hung_up(raw, EPROTO);
}

TEST_CASE("garbage instead of a hello is refused the same way") {
    Fixture fixture;
    RawTlsClient raw(fixture.files.client());
    raw.connect(fixture.server->port());
    raw.write(std::vector<std::uint8_t>(16, 0xff));
    CHECK(expect_error_reply(raw, 0xffffffff).status == protocol::Status::bad_message);
    CHECK_FALSE(raw.read_reply());
    fixture.check_honest_client_served();
    CHECK(fixture.log->opened.size() == 1); // only the honest session was ever made
}

TEST_CASE("an oversized frame is refused from its header, before any body arrives") {
    Fixture fixture;
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    raw.write(header(protocol::MessageType::create, 7, 1U << 30)); // and no body at all
    auto error = expect_error_reply(raw, 7);
    CHECK(error.status == protocol::Status::bad_message);
    CHECK_THAT(error.message, Catch::Contains("create body of 1073741824 bytes exceeds the limit"));
    fixture.check_hung_up(raw, EPROTO);
}

TEST_CASE("a frame cut short by the client closing ends its session") {
    Fixture fixture;
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    auto bytes = header(protocol::MessageType::remove, 3, 100);
    bytes.resize(bytes.size() + 10, 'x'); // 10 of the 100 announced bytes
    raw.write(bytes);
    raw.shutdown_send();
    fixture.check_raw_session_closed(ECONNRESET);
    fixture.check_honest_client_served();
}

TEST_CASE("a frame cut short by a client that stalls ends at the heartbeat timeout") {
    Fixture fixture(500ms);
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    auto bytes = header(protocol::MessageType::remove, 3, 100);
    bytes.resize(bytes.size() + 10, 'x');
    raw.write(bytes);
    fixture.check_raw_session_closed(ETIMEDOUT);
    CHECK_THAT(fixture.log->closed[0].message(), Catch::Contains("heartbeat timeout"));
    fixture.check_honest_client_served();
}

TEST_CASE("a malformed body is refused and the session goes on") {
    Fixture fixture;
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    // A remove whose pool set name claims 200 bytes in a body of 8.
    auto bytes = header(protocol::MessageType::remove, 11, 8);
    for (std::uint8_t b : std::initializer_list<std::uint8_t>{0xc8, 0, 'a', 'b', 0, 0, 0, 0})
        bytes.push_back(b);
    raw.write(bytes);
    auto error = expect_error_reply(raw, 11);
    CHECK(error.status == protocol::Status::bad_message);
    CHECK_THAT(error.message, Catch::Contains("pool_set: truncated"));

    // The frame boundary was intact, so the session is too.
    raw.send(protocol::Request(protocol::Ping{}), 12);
    auto pong = raw.read_reply();
    REQUIRE(pong);
    CHECK(pong->request_id == 12);
    CHECK(std::holds_alternative<protocol::Pong>(pong->message));
    raw.send(protocol::Request(protocol::RemoveRequest{"fine.set", false, false}), 13);
    auto removed = raw.read_reply();
    REQUIRE(removed);
    CHECK(std::get<protocol::RemoveReply>(removed->message).message == "fine.set");
    fixture.check_honest_client_served();
    CHECK(fixture.log->closed.empty());
}

TEST_CASE("a frame in a foreign version or of an unknown type ends the session") {
    Fixture fixture;
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    protocol::Status expected = protocol::Status::bad_message;
    int errno_value = EPROTO;
    SECTION("foreign version") {
        raw.write(header(protocol::MessageType::status, 21, 0, protocol::kProtocolVersion + 1));
        expected = protocol::Status::protocol_mismatch;
        errno_value = EPROTONOSUPPORT;
    }
    SECTION("unknown type") {
        auto bytes = header(protocol::MessageType::status, 21, 0);
        bytes[6] = 99;
        raw.write(bytes);
    }
    CHECK(expect_error_reply(raw, 21).status == expected);
    fixture.check_hung_up(raw, errno_value);
}

TEST_CASE("a reply sent by the client is refused and the session goes on") {
    Fixture fixture;
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    raw.write(header(protocol::MessageType::pong, 21, 0));
    auto error = expect_error_reply(raw, 21);
    CHECK(error.status == protocol::Status::bad_message);
    CHECK(error.message == "pong received where a request was expected");
    raw.send(protocol::Request(protocol::Ping{}), 22);
    auto pong = raw.read_reply();
    REQUIRE(pong);
    CHECK(pong->request_id == 22);
    CHECK(std::holds_alternative<protocol::Pong>(pong->message));
    CHECK(fixture.log->closed.empty());
    fixture.check_honest_client_served();
}

TEST_CASE("pings are answered while the session's handler is busy") {
    std::latch release(1);
    Fixture fixture(10s, [&](const protocol::Request& request) {
        if (const auto* remove = std::get_if<protocol::RemoveRequest>(&request);
            remove && remove->pool_set == "slow.set")
            release.wait();
        return RecordingHandler::echo(request);
    });
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    raw.send(protocol::Request(protocol::RemoveRequest{"slow.set", false, false}), 1);
    REQUIRE(fixture.log->wait([](auto& l) { return l.requests.size() == 1; }));

    // The handler is blocked inside handle(); the I/O side still answers heartbeats.
    for (std::uint32_t id = 2; id < 5; ++id) {
        raw.send(protocol::Request(protocol::Ping{}), id);
        auto pong = raw.read_reply();
        REQUIRE(pong);
        CHECK(pong->request_id == id);
        CHECK(std::holds_alternative<protocol::Pong>(pong->message));
    }
    release.count_down();
    auto reply = raw.read_reply();
    REQUIRE(reply);
    CHECK(reply->request_id == 1);
    CHECK(std::get<protocol::RemoveReply>(reply->message).message == "slow.set");
}

TEST_CASE("a flood of requests beyond the in-flight limit ends the session") {
    std::latch release(1);
    Fixture fixture(10s, [&](const protocol::Request& request) {
        if (std::holds_alternative<protocol::CloseRequest>(request))
            release.wait();
        return RecordingHandler::echo(request);
    });
    RawTlsClient raw(fixture.files.client());
    raw.connect_and_hello(fixture.server->port());
    for (std::uint32_t id = 1; id <= 20; ++id)
        raw.send(protocol::Request(protocol::CloseRequest{}), id);
    auto error = expect_error_reply(raw, 9); // the 9th request is one too many
    CHECK(error.status == protocol::Status::busy);
    CHECK_FALSE(raw.read_reply());
    release.count_down();
    fixture.check_raw_session_closed(EBUSY);
    fixture.check_honest_client_served();
}
