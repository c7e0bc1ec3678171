// SPDX-License-Identifier: BSD-3-Clause
// Every message survives encode -> decode unchanged, with ordinary values and with every string
// and list at its limit (the largest frames the protocol allows).
#include <string>

#include <catch2/catch.hpp>

#include "protocol/codec.h"
#include "protocol/message_limits.h"

namespace protocol = rpmem::protocol;

namespace {

rpmem::PoolAttributes sample_attributes() {
    rpmem::PoolAttributes a;
    a.signature = {'P', 'M', 'E', 'M', 'O', 'B', 'J', '\0'};
    a.major = 6;
    a.compat_features = 0x1;
    a.incompat_features = 0x7;
    a.ro_compat_features = 0xdeadbeef;
    for (std::size_t i = 0; i < a.uuid.size(); ++i) {
        a.poolset_uuid[i] = static_cast<std::uint8_t>(i);
        a.uuid[i] = static_cast<std::uint8_t>(0x10 + i);
        a.next_uuid[i] = static_cast<std::uint8_t>(0x20 + i);
        a.prev_uuid[i] = static_cast<std::uint8_t>(0x30 + i);
        a.user_flags[i] = static_cast<std::uint8_t>(0xf0 | i);
    }
    return a;
}

protocol::DataPath sample_data_path(std::size_t host_length = 9) {
    protocol::DataPath d;
    d.provider = "tcp;ofi_rxm";
    d.host = std::string(host_length, 'h');
    d.port = 65535;
    d.remote_base = ~0ULL;
    d.remote_key = 0x8000000000000001ULL;
    d.offset_addressing = true;
    d.lanes = 0xffffffff;
    d.persist_method = protocol::PersistMethod::apm;
    d.inline_buffer_size = 8192;
    d.pool_size = 1ULL << 40;
    d.token.fill(0xa5);
    return d;
}

void round_trip_request(const protocol::Request& request) {
    auto frame = protocol::encode(request, 0xfffffffe);
    REQUIRE(frame);
    CHECK(frame->size() <= protocol::kMaxFrameSize);
    auto decoded = protocol::decode_request_frame(*frame);
    REQUIRE(decoded);
    CHECK(decoded->request_id == 0xfffffffe);
    CHECK(decoded->message == request);
}

void round_trip_reply(const protocol::Reply& reply) {
    auto frame = protocol::encode(reply, 42);
    REQUIRE(frame);
    CHECK(frame->size() <= protocol::kMaxFrameSize);
    auto decoded = protocol::decode_reply_frame(*frame);
    REQUIRE(decoded);
    CHECK(decoded->request_id == 42);
    CHECK(decoded->message == reply);
}

} // namespace

TEST_CASE("requests round-trip") {
    round_trip_request(protocol::Hello{});
    round_trip_request(
        protocol::Hello{7, 9, ~0ULL, std::string(protocol::kMaxSoftwareLength, 's')});

    protocol::CreateRequest create;
    create.pool_set = "dir/pool.set";
    create.pool_size = 8ULL << 30;
    create.lanes = 1024;
    create.provider = protocol::ProviderPreference::verbs;
    create.persist_method = protocol::PersistMethod::commit;
    create.attributes = sample_attributes();
    round_trip_request(create);
    create.pool_set = std::string(protocol::kMaxPoolSetNameLength, 'n');
    round_trip_request(create);
    round_trip_request(protocol::CreateRequest{}); // zero attributes: no headers

    protocol::OpenRequest open;
    open.pool_set = "pool.set";
    open.pool_size = 123456789;
    open.lanes = 3;
    open.provider = protocol::ProviderPreference::sockets;
    open.persist_method = protocol::PersistMethod::apm;
    round_trip_request(open);

    round_trip_request(protocol::CloseRequest{false});
    round_trip_request(protocol::CloseRequest{true});
    round_trip_request(protocol::SetAttrRequest{sample_attributes()});
    round_trip_request(protocol::RemoveRequest{"x.set", false, true});
    round_trip_request(protocol::RemoveRequest{"x.set", true, false});
    round_trip_request(protocol::StatusRequest{});
    round_trip_request(protocol::StatusRequest{17});
    round_trip_request(protocol::EventsRequest{~0ULL});
    round_trip_request(protocol::ResyncReport{protocol::ResyncPhase::progress, 5, 9});
    round_trip_request(protocol::ResyncReport{protocol::ResyncPhase::failed, 0, 0});
    round_trip_request(protocol::Ping{});
    round_trip_request(protocol::PromoteRequest{"a.set", false});
    round_trip_request(
        protocol::PromoteRequest{std::string(protocol::kMaxPoolSetNameLength, 'p'), true});
    round_trip_request(protocol::DemoteRequest{"a.set", 0});
    round_trip_request(protocol::DemoteRequest{"a.set", ~0ULL});
    round_trip_request(protocol::RejoinRequest{"a.set", 7, sample_attributes().poolset_uuid,
                                               sample_attributes().uuid});
    round_trip_request(protocol::AttachReplicaRequest{"a.set", sample_attributes().next_uuid});
    round_trip_request(protocol::AttachReplicaRequest{"a.set", {}});
    round_trip_request(protocol::DigestRequest{4096, 128ULL << 20, 1 << 20});
    round_trip_request(protocol::DigestRequest{~0ULL - 4096, 4096, 4096});
}

TEST_CASE("replies round-trip") {
    protocol::HelloReply hello;
    hello.status = protocol::Status::ok;
    hello.message = std::string(protocol::kMaxMessageLength, 'm');
    hello.version = 1;
    hello.capabilities = 3;
    hello.software = "rpmemd 0.1.0";
    hello.session_id = 77;
    hello.heartbeat_timeout_ms = 15000;
    hello.identity = std::string(protocol::kMaxIdentityLength, 'i');
    round_trip_reply(hello);

    protocol::CreateReply create;
    create.message = "gpspm: the tcp provider lacks non-allocating writes";
    create.data_path = sample_data_path(protocol::kMaxHostLength);
    round_trip_reply(create);

    protocol::OpenReply open;
    open.status = protocol::Status::busy;
    open.message = "pool set in use";
    open.data_path = sample_data_path();
    open.attributes = sample_attributes();
    round_trip_reply(open);

    round_trip_reply(protocol::CloseReply{protocol::Status::fatal, "boom"});
    round_trip_reply(protocol::SetAttrReply{protocol::Status::invalid_request, ""});
    round_trip_reply(protocol::RemoveReply{protocol::Status::no_exist, "gone"});
    round_trip_reply(protocol::Pong{});
    round_trip_reply(protocol::ErrorReply{protocol::Status::protocol_mismatch, "v9"});
    round_trip_reply(protocol::DigestReply{protocol::Status::ok, "", {0, 1, ~0ULL}});
    round_trip_reply(protocol::DigestReply{protocol::Status::invalid_request, "header", {}});

    protocol::StatusReply status;
    status.software = "rpmemd";
    status.protocol_version = 1;
    status.uptime_seconds = 3600;
    status.sessions = 2;
    status.pools_in_use = 1;
    status.max_sessions = 64;
    status.max_sessions_per_client = 16;
    status.pending_connections = 3;
    status.max_pending_connections = 128;
    status.workers = 2;
    status.all_identities = true;
    status.visible_sessions = 9;
    status.first_session = 8;
    protocol::SessionStatus session;
    session.id = 5;
    session.identity = "alice";
    session.peer = "[::1]:4000";
    session.connected_ms = 12345;
    session.pool_set = "a.set";
    session.provider = "tcp";
    session.persist_method = protocol::PersistMethod::commit;
    session.method_reason = "the provider offers FI_RMA_PMEM";
    session.lanes = 4;
    session.state = protocol::ReplicaState::outdated;
    session.generation = 7;
    session.persists = 100;
    session.persisted_bytes = 6400;
    session.latency_p50_ns = 10'000;
    session.latency_p99_ns = 50'000;
    session.resync_active = true;
    session.resync_done_bytes = 1;
    session.resync_total_bytes = 2;
    status.session_list = {session, protocol::SessionStatus{}};
    round_trip_reply(status);

    round_trip_reply(protocol::ResyncReportReply{protocol::Status::invalid_request, "no pool"});
    round_trip_reply(protocol::PromoteReply{protocol::Status::ok, "forced: may lose writes",
                                            protocol::ReplicaState::inconsistent, 2, 3, 1});
    round_trip_reply(protocol::PromoteReply{protocol::Status::split_brain,
                                            std::string(protocol::kMaxMessageLength, 'm'),
                                            protocol::ReplicaState::promoted, 0, 0, 0});
    round_trip_reply(
        protocol::DemoteReply{protocol::Status::ok, "", protocol::ReplicaState::consistent, 2});
    round_trip_reply(protocol::RejoinReply{protocol::Status::ok, "", sample_attributes().uuid,
                                           protocol::ReplicaState::outdated, 3});
    round_trip_reply(protocol::AttachReplicaReply{
        protocol::Status::ok, "", sample_attributes().poolset_uuid, sample_attributes().uuid,
        sample_attributes().next_uuid, protocol::ReplicaState::promoted, 3, true, true});
    protocol::EventsReply events;
    events.oldest_sequence = 3;
    events.newest_sequence = 40;
    protocol::DaemonEvent event;
    event.sequence = 4;
    event.unix_time_ms = 1'700'000'000'000;
    event.kind = protocol::EventKind::state_changed;
    event.session_id = 5;
    event.identity = "alice";
    event.peer = "127.0.0.1:4000";
    event.pool_set = "a.set";
    event.has_state = true;
    event.state = protocol::ReplicaState::consistent;
    event.generation = 2;
    event.reason = "closed";
    protocol::DaemonEvent refused;
    refused.kind = protocol::EventKind::refused;
    refused.reason = "certificate verify failed";
    events.events = {event, refused};
    round_trip_reply(events);
}

TEST_CASE("the largest possible frames fit the frame limit and round-trip") {
    protocol::StatusReply status;
    status.message = std::string(protocol::kMaxMessageLength, 'm');
    status.software = std::string(protocol::kMaxSoftwareLength, 's');
    status.pools_in_use = 1000;
    for (std::size_t i = 0; i < protocol::kMaxStatusSessions; ++i) {
        protocol::SessionStatus session;
        session.identity = std::string(protocol::kMaxIdentityLength, 'i');
        session.peer = std::string(protocol::kMaxPeerLength, 'p');
        session.pool_set = std::string(protocol::kMaxPoolSetNameLength, 'a' + i);
        session.provider = std::string(protocol::kMaxProviderNameLength, 'v');
        session.method_reason = std::string(protocol::kMaxMessageLength, 'r');
        status.session_list.push_back(session);
    }
    auto frame = protocol::encode(protocol::Reply(status), 1);
    REQUIRE(frame);
    CHECK(frame->size() == protocol::kFrameHeaderSize +
                               protocol::max_body_length(protocol::MessageType::status_reply));
    CHECK(frame->size() <= protocol::kMaxFrameSize);
    round_trip_reply(status);

    protocol::EventsReply events;
    events.message = std::string(protocol::kMaxMessageLength, 'm');
    for (std::size_t i = 0; i < protocol::kMaxEventsPerReply; ++i) {
        protocol::DaemonEvent event;
        event.identity = std::string(protocol::kMaxIdentityLength, 'i');
        event.peer = std::string(protocol::kMaxPeerLength, 'p');
        event.pool_set = std::string(protocol::kMaxPoolSetNameLength, 'a' + i);
        event.reason = std::string(protocol::kMaxMessageLength, 'r');
        events.events.push_back(event);
    }
    frame = protocol::encode(protocol::Reply(events), 1);
    REQUIRE(frame);
    CHECK(frame->size() == protocol::kFrameHeaderSize +
                               protocol::max_body_length(protocol::MessageType::events_reply));
    CHECK(frame->size() <= protocol::kMaxFrameSize);
    round_trip_reply(events);
}

TEST_CASE("the per-type limit is exactly the size of the largest message of that type") {
    protocol::OpenReply open;
    open.message = std::string(protocol::kMaxMessageLength, 'm');
    open.data_path = sample_data_path(protocol::kMaxHostLength);
    open.data_path.provider = std::string(protocol::kMaxProviderNameLength, 'p');
    auto frame = protocol::encode(protocol::Reply(open), 1);
    REQUIRE(frame);
    CHECK(frame->size() - protocol::kFrameHeaderSize ==
          protocol::max_body_length(protocol::MessageType::open_reply));

    protocol::CreateRequest create;
    create.pool_set = std::string(protocol::kMaxPoolSetNameLength, 'n');
    frame = protocol::encode(protocol::Request(create), 1);
    REQUIRE(frame);
    CHECK(frame->size() - protocol::kFrameHeaderSize ==
          protocol::max_body_length(protocol::MessageType::create));

    protocol::DigestReply digests;
    digests.message = std::string(protocol::kMaxMessageLength, 'm');
    digests.digests.assign(protocol::kMaxDigestExtents, 0x0123456789abcdefULL);
    frame = protocol::encode(protocol::Reply(digests), 1);
    REQUIRE(frame);
    CHECK(frame->size() <= protocol::kMaxFrameSize);
    CHECK(frame->size() - protocol::kFrameHeaderSize ==
          protocol::max_body_length(protocol::MessageType::digest_reply));
    round_trip_reply(digests);

    frame = protocol::encode(protocol::Request(protocol::DigestRequest{0, 4096, 4096}), 1);
    REQUIRE(frame);
    CHECK(frame->size() - protocol::kFrameHeaderSize ==
          protocol::max_body_length(protocol::MessageType::digest));
}

TEST_CASE("reply helpers give status and message of any reply") {
    CHECK(protocol::reply_status(protocol::Reply(protocol::Pong{})) == protocol::Status::ok);
    CHECK(protocol::reply_message(protocol::Reply(protocol::Pong{})).empty());
    protocol::Reply busy =
        protocol::failure_reply(protocol::MessageType::open, protocol::Status::busy, "in use");
    REQUIRE(std::holds_alternative<protocol::OpenReply>(busy));
    CHECK(protocol::reply_status(busy) == protocol::Status::busy);
    CHECK(protocol::reply_message(busy) == "in use");
    CHECK(std::holds_alternative<protocol::ErrorReply>(
        protocol::failure_reply(protocol::MessageType::ping, protocol::Status::fatal, "")));
    CHECK(protocol::reply_type_of(protocol::MessageType::set_attr) ==
          protocol::MessageType::set_attr_reply);
}
