// SPDX-License-Identifier: BSD-3-Clause
// Hostile frames against the real rpmemd: garbage, an oversized frame, a body cut short, a
// frame left half sent. Each gets an error reply or a disconnect, never a crash or a stall,
// while another client holding a pool keeps being served.
#include <cerrno>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "channel/client.h"
#include "protocol/frame_header.h"
#include "protocol/message_limits.h"
#include "raw_tls_client.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using protocol::Status;

namespace {

// A client that holds a pool across the whole test and must keep working.
struct Bystander {
    std::unique_ptr<channel::Client> client;

    explicit Bystander(TargetHost& host) {
        host.write_set("bystander.set", "bystander", 1);
        client = host.client();
        protocol::CreateRequest create;
        create.pool_set = "bystander.set";
        create.lanes = 1;
        create.attributes = pmemobj_attributes();
        auto created = channel::expect<protocol::CreateReply>(client->call(create), "create");
        REQUIRE(created);
    }

    void check_served() {
        auto status = channel::expect<protocol::StatusReply>(
            client->call(protocol::StatusRequest{}), "status");
        INFO((status ? std::string() : status.error().message()));
        REQUIRE(status);
        std::vector<std::string> pool_sets;
        for (const auto& session : status->session_list)
            if (!session.pool_set.empty())
                pool_sets.push_back(session.pool_set);
        CHECK(pool_sets == std::vector<std::string>{"bystander.set"});
    }
};

RawTlsClient raw_session(TargetHost& host) {
    auto raw = RawTlsClient::connect(host.port(), host.credentials().client());
    INFO((raw ? std::string() : raw.error().message()));
    REQUIRE(raw);
    REQUIRE(raw->hello());
    return std::move(*raw);
}

// Reads until the server closes the connection, accepting error replies on the way.
void expect_disconnect(RawTlsClient& raw) {
    for (int frames = 0; frames < 4; ++frames) {
        auto reply = raw.receive(kPatience);
        if (!reply) {
            CHECK(reply.error().errno_value() == ECONNRESET);
            return;
        }
        CHECK(std::holds_alternative<protocol::ErrorReply>(reply->message));
    }
    FAIL("the server kept the connection open");
}

} // namespace

TEST_CASE("garbage instead of a frame: error reply, then disconnect") {
    TargetHost host;
    Bystander bystander(host);
    auto raw = raw_session(host);
    std::vector<std::uint8_t> garbage(64);
    for (std::size_t i = 0; i < garbage.size(); ++i)
        garbage[i] = static_cast<std::uint8_t>(i * 37 + 11);
    REQUIRE(raw.send(garbage));
    auto reply = raw.receive(kPatience);
    REQUIRE(reply);
    auto* error = std::get_if<protocol::ErrorReply>(&reply->message);
    REQUIRE(error != nullptr);
    CHECK(error->status == Status::bad_message);
    expect_disconnect(raw);
    bystander.check_served();
}

TEST_CASE("an oversized frame is refused before anything is allocated for it") {
    TargetHost host;
    Bystander bystander(host);
    auto raw = raw_session(host);
    protocol::FrameHeader header{protocol::kProtocolVersion, protocol::MessageType::create, 9,
                                 0xFFFFFFF0u};
    auto bytes = protocol::encode_frame_header(header);
    REQUIRE(raw.send(bytes));
    auto reply = raw.receive(kPatience);
    REQUIRE(reply);
    CHECK(protocol::reply_status(reply->message) == Status::bad_message);
    expect_disconnect(raw);

    // Just above the whole-frame limit, with the body actually sent: refused as well.
    auto raw2 = raw_session(host);
    header.body_length = static_cast<std::uint32_t>(protocol::kMaxFrameSize);
    bytes = protocol::encode_frame_header(header);
    REQUIRE(raw2.send(bytes));
    std::vector<std::uint8_t> body(protocol::kMaxFrameSize, 'A');
    (void)raw2.send(body); // the server may already have closed
    expect_disconnect(raw2);
    bystander.check_served();
}

TEST_CASE("a body cut short gets an error reply and the session goes on") {
    TargetHost host;
    Bystander bystander(host);
    auto raw = raw_session(host);
    protocol::RemoveRequest remove{"some.set", false, false};
    auto frame = protocol::encode(protocol::Request(remove), 5);
    REQUIRE(frame);
    // Drop the flags word from the body and say so in the header: a well-framed, short body.
    frame->resize(frame->size() - 4);
    auto header = protocol::decode_frame_header(
                      std::span<const std::uint8_t, protocol::kFrameHeaderSize>(frame->data(), 16))
                      .result;
    REQUIRE(header);
    header->body_length -= 4;
    auto bytes = protocol::encode_frame_header(*header);
    std::copy(bytes.begin(), bytes.end(), frame->begin());
    REQUIRE(raw.send(*frame));
    auto reply = raw.receive(kPatience);
    REQUIRE(reply);
    CHECK(reply->request_id == 5);
    CHECK(protocol::reply_status(reply->message) == Status::bad_message);

    // The same connection still answers a good request.
    REQUIRE(raw.send(protocol::StatusRequest{}, 6));
    auto status = raw.receive(kPatience);
    REQUIRE(status);
    CHECK(status->request_id == 6);
    CHECK(std::holds_alternative<protocol::StatusReply>(status->message));
    bystander.check_served();
}

TEST_CASE("a frame left half sent stalls nobody but its sender") {
    TargetHost host;
    Bystander bystander(host);
    {
        auto raw = raw_session(host);
        auto frame = protocol::encode(protocol::Request(protocol::RemoveRequest{"x.set"}), 3);
        REQUIRE(frame);
        REQUIRE(raw.send(std::span(*frame).first(frame->size() / 2)));
        bystander.check_served();
        // The sender goes away mid-frame.
    }
    bystander.check_served();
    // A Hello that never comes: the handshake deadline is the sender's problem only.
    auto silent = RawTlsClient::connect(host.port(), host.credentials().client());
    REQUIRE(silent);
    bystander.check_served();
}
