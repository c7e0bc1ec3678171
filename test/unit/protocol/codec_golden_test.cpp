// SPDX-License-Identifier: BSD-3-Clause
// Hand-written bytes of whole frames: the wire format is what these arrays say, whatever the
// codec happens to do. Each message is encoded and compared, and the bytes decoded and compared.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/codec.h"

namespace protocol = rpmem::protocol;
using Bytes = std::vector<std::uint8_t>;

namespace {

void append(Bytes& bytes, std::size_t count, std::uint8_t value) {
    bytes.insert(bytes.end(), count, value);
}

// `message` sent as a Frame (protocol::Request or protocol::Reply) encodes to the golden bytes,
// and `decode` turns those bytes back into the same message and request id.
template <typename Frame, typename Message, typename Decode>
void check_golden(const Message& message, std::uint32_t request_id, const Bytes& expected,
                  Decode decode) {
    auto encoded = protocol::encode(Frame(message), request_id);
    REQUIRE(encoded);
    CHECK(*encoded == expected);

    auto decoded = decode(expected);
    REQUIRE(decoded);
    CHECK(decoded->request_id == request_id);
    REQUIRE(std::holds_alternative<Message>(decoded->message));
    CHECK(std::get<Message>(decoded->message) == message);
}

template <typename Message>
void check_request(const Message& message, std::uint32_t request_id, const Bytes& expected) {
    check_golden<protocol::Request>(message, request_id, expected, [](const Bytes& bytes) {
        return protocol::decode_request_frame(bytes);
    });
}

template <typename Message>
void check_reply(const Message& message, std::uint32_t request_id, const Bytes& expected) {
    check_golden<protocol::Reply>(message, request_id, expected, [](const Bytes& bytes) {
        return protocol::decode_reply_frame(bytes);
    });
}

} // namespace

TEST_CASE("golden: ping") {
    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, // magic "RPMC"
        0x02, 0x00,             // version 2
        0x0f, 0x00,             // type 15 = ping
        0x07, 0x00, 0x00, 0x00, // request id 7
        0x00, 0x00, 0x00, 0x00, // no body
    };
    check_request(protocol::Ping{}, 7, expected);
}

TEST_CASE("golden: hello") {
    protocol::Hello hello;
    hello.min_version = 1;
    hello.max_version = 1;
    hello.capabilities = 3;
    hello.software = "t";
    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x01, 0x00, // magic, version 2, type 1 = hello
        0x01, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, // request id 1, body 15 bytes
        0x01, 0x00,                                     // min_version
        0x01, 0x00,                                     // max_version
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // capabilities
        0x01, 0x00, 0x74,                               // software "t"
    };
    check_request(hello, 1, expected);
}

TEST_CASE("golden: close with remove") {
    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x07, 0x00, // type 7 = close
        0x04, 0x03, 0x02, 0x01, 0x04, 0x00, 0x00, 0x00, // request id 0x01020304, body 4 bytes
        0x01, 0x00, 0x00, 0x00,                         // flags: remove
    };
    check_request(protocol::CloseRequest{.remove = true}, 0x01020304, expected);
}

TEST_CASE("golden: close in sync, close untouched") {
    Bytes in_sync{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x07, 0x00, // type 7 = close
        0x05, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, // request id 5, body 4 bytes
        0x02, 0x00, 0x00, 0x00,                         // flags: in_sync
    };
    check_request(protocol::CloseRequest{.in_sync = true}, 5, in_sync);
    Bytes untouched{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x07, 0x00, // type 7 = close
        0x05, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, // request id 5, body 4 bytes
        0x04, 0x00, 0x00, 0x00,                         // flags: untouched
    };
    check_request(protocol::CloseRequest{.untouched = true}, 5, untouched);
}

TEST_CASE("golden: remove with force and pool set file") {
    protocol::RemoveRequest remove;
    remove.pool_set = "a/b.set";
    remove.force = true;
    remove.remove_set_file = true;
    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x0b, 0x00,      // type 11 = remove
        0x02, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x00, 0x00,      // request id 2, body 13 bytes
        0x07, 0x00, 'a',  '/',  'b',  '.',  's',  'e',  't', // pool_set
        0x03, 0x00, 0x00, 0x00,                              // flags: force | pool set
    };
    check_request(remove, 2, expected);
}

TEST_CASE("golden: create with pool attributes") {
    protocol::CreateRequest create;
    create.pool_set = "p.set";
    create.pool_size = 0x100000;
    create.lanes = 4;
    create.provider = protocol::ProviderPreference::tcp;
    create.persist_method = protocol::PersistMethod::gpspm;
    create.attributes.signature = {'P', 'M', 'E', 'M', 'O', 'B', 'J', '\0'};
    create.attributes.major = 6;
    create.attributes.compat_features = 1;
    create.attributes.incompat_features = 2;
    create.attributes.ro_compat_features = 3;
    create.attributes.poolset_uuid.fill(0x11);
    create.attributes.uuid.fill(0x22);
    create.attributes.next_uuid.fill(0x33);
    create.attributes.prev_uuid.fill(0x44);
    create.attributes.user_flags.fill(0x55);

    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x03, 0x00, // type 3 = create
        0x05, 0x00, 0x00, 0x00, 0x7d, 0x00, 0x00, 0x00, // request id 5, body 125 bytes
        0x05, 0x00, 'p',  '.',  's',  'e',  't',        // pool_set
        0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, // pool_size 1 MiB
        0x04, 0x00, 0x00, 0x00,                         // lanes
        0x03,                                           // provider tcp
        0x01,                                           // persist method gpspm
        'P',  'M',  'E',  'M',  'O',  'B',  'J',  0x00, // attributes.signature
        0x06, 0x00, 0x00, 0x00,                         // major
        0x01, 0x00, 0x00, 0x00,                         // compat
        0x02, 0x00, 0x00, 0x00,                         // incompat
        0x03, 0x00, 0x00, 0x00,                         // ro_compat
    };
    append(expected, 16, 0x11); // poolset_uuid
    append(expected, 16, 0x22); // uuid
    append(expected, 16, 0x33); // next_uuid
    append(expected, 16, 0x44); // prev_uuid
    append(expected, 16, 0x55); // user_flags
    check_request(create, 5, expected);
}

TEST_CASE("golden: open reply with a data path") {
    protocol::OpenReply reply;
    reply.data_path.provider = "tcp";
    reply.data_path.host = "10.0.0.2";
    reply.data_path.port = 7637;
    reply.data_path.remote_base = 0x00007f0000001000;
    reply.data_path.remote_key = 0x1122334455667788;
    reply.data_path.offset_addressing = false;
    reply.data_path.lanes = 8;
    reply.data_path.persist_method = protocol::PersistMethod::commit;
    reply.data_path.inline_buffer_size = 4096;
    reply.data_path.pool_size = 0x40000000;
    for (std::size_t i = 0; i < reply.data_path.token.size(); ++i)
        reply.data_path.token[i] = static_cast<std::uint8_t>(i);
    reply.state = protocol::ReplicaState::outdated;
    reply.generation = 0x0102030405060708;

    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x06, 0x00,           // type 6 = open_reply
        0x09, 0x00, 0x00, 0x00, 0xc8, 0x00, 0x00, 0x00,           // request id 9, body 200 bytes
        0x00, 0x00,                                               // status ok
        0x00, 0x00,                                               // message ""
        0x03, 0x00, 't',  'c',  'p',                              // provider
        0x08, 0x00, '1',  '0',  '.',  '0',  '.',  '0',  '.', '2', // host
        0xd5, 0x1d,                                               // port 7637
        0x00, 0x10, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00,           // remote_base
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,           // remote_key
        0x00,                                                     // offset_addressing
        0x08, 0x00, 0x00, 0x00,                                   // lanes
        0x03,                                                     // persist method commit
        0x00, 0x10, 0x00, 0x00,                                   // inline_buffer_size
        0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00,           // pool_size 1 GiB
    };
    for (std::uint8_t i = 0; i < 32; ++i) // token
        expected.push_back(i);
    append(expected, 104, 0x00);                                            // attributes: none
    expected.push_back(0x03);                                               // state 3 = outdated
    for (std::uint8_t b : {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}) // generation
        expected.push_back(b);
    check_reply(reply, 9, expected);
}

TEST_CASE("golden: error reply") {
    protocol::ErrorReply reply{protocol::Status::bad_message, "bad"};
    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x12, 0x00, // type 18 = error_reply
        0x09, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, // request id 9, body 7 bytes
        0x0f, 0x00,                                     // status 15 = bad_message
        0x03, 0x00, 'b',  'a',  'd',                    // message
    };
    check_reply(reply, 9, expected);
}

TEST_CASE("golden: hello reply refusing a version") {
    protocol::HelloReply reply;
    reply.status = protocol::Status::protocol_mismatch;
    reply.message = "v";
    reply.version = 0;
    reply.capabilities = 0;
    reply.software = "d";
    reply.session_id = 0x0102;
    reply.heartbeat_timeout_ms = 5000;
    reply.identity = "al";
    Bytes expected{
        0x52, 0x50, 0x4d, 0x43, 0x02, 0x00, 0x02, 0x00, // type 2 = hello_reply
        0x00, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, // request id 0, body 34 bytes
        0x01, 0x00,                                     // status 1 = protocol_mismatch
        0x01, 0x00, 'v',                                // message
        0x00, 0x00,                                     // version
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // capabilities
        0x01, 0x00, 'd',                                // software
        0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // session id
        0x88, 0x13, 0x00, 0x00,                         // heartbeat timeout 5000 ms
        0x02, 0x00, 'a',  'l',                          // identity
    };
    check_reply(reply, 0, expected);
}

namespace {

// The 16-byte header of a digest frame. Its version bytes follow kProtocolVersion (rather than
// spelling out 1) so that a version bump leaves the digest bodies' golden bytes alone.
Bytes digest_header(std::uint8_t type, std::uint8_t request_id, std::uint8_t body_length) {
    Bytes header{0x52, 0x50, 0x4d, 0x43, 0, 0, type, 0, request_id, 0, 0, 0, body_length, 0, 0, 0};
    header[4] = static_cast<std::uint8_t>(protocol::kProtocolVersion & 0xff);
    header[5] = static_cast<std::uint8_t>(protocol::kProtocolVersion >> 8);
    return header;
}

} // namespace

TEST_CASE("golden: digest request") {
    Bytes expected = digest_header(0x13, 5, 20); // type 19 = digest, request id 5, 20 bytes
    Bytes body{
        0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // offset 4096
        0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, // length 3 MiB
        0x00, 0x00, 0x10, 0x00,                         // extent_size 1 MiB
    };
    expected.insert(expected.end(), body.begin(), body.end());
    check_request(protocol::DigestRequest{4096, 3 << 20, 1 << 20}, 5, expected);
}

TEST_CASE("golden: digest reply with two digests, and a refused one") {
    Bytes expected = digest_header(0x14, 6, 24); // type 20 = digest_reply, 24 bytes
    Bytes body{
        0x00, 0x00,                                     // status ok
        0x00, 0x00,                                     // message ""
        0x02, 0x00, 0x00, 0x00,                         // 2 digests
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // 0x0102030405060708
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // ~0
    };
    expected.insert(expected.end(), body.begin(), body.end());
    check_reply(protocol::DigestReply{protocol::Status::ok, "", {0x0102030405060708ULL, ~0ULL}}, 6,
                expected);

    Bytes refused = digest_header(0x14, 7, 11);
    Bytes refused_body{
        0x10, 0x00,                  // status 16 = invalid_request
        0x03, 0x00, 'o',  'f',  'f', // message "off"
        0x00, 0x00, 0x00, 0x00,      // no digests
    };
    refused.insert(refused.end(), refused_body.begin(), refused_body.end());
    check_reply(protocol::DigestReply{protocol::Status::invalid_request, "off", {}}, 7, refused);
}

TEST_CASE("golden: status request for a later page, events request, resync report") {
    Bytes status = digest_header(0x0d, 3, 4);  // type 13 = status, request id 3, 4 bytes
    Bytes status_body{0x10, 0x00, 0x00, 0x00}; // first_session 16
    status.insert(status.end(), status_body.begin(), status_body.end());
    check_request(protocol::StatusRequest{16}, 3, status);

    Bytes events = digest_header(0x1d, 4, 8); // type 29 = events, request id 4, 8 bytes
    Bytes events_body{0x2a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}; // after sequence 298
    events.insert(events.end(), events_body.begin(), events_body.end());
    check_request(protocol::EventsRequest{298}, 4, events);

    Bytes report = digest_header(0x1f, 6, 17); // type 31 = resync_report, request id 6
    Bytes report_body{
        0x02,                                           // phase progress
        0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, // done 1 MiB
        0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, // total 4 MiB
    };
    report.insert(report.end(), report_body.begin(), report_body.end());
    check_request(protocol::ResyncReport{protocol::ResyncPhase::progress, 1 << 20, 4 << 20}, 6,
                  report);
}

TEST_CASE("golden: promote, demote, rejoin and attach_replica") {
    Bytes promote = digest_header(0x15, 2, 9); // type 21 = promote, request id 2, 9 bytes
    Bytes promote_body{
        0x03, 0x00, 'a',  '.',  's', // pool_set "a.s"
        0x01, 0x00, 0x00, 0x00,      // flags: force
    };
    promote.insert(promote.end(), promote_body.begin(), promote_body.end());
    check_request(protocol::PromoteRequest{"a.s", true}, 2, promote);

    Bytes promoted = digest_header(0x16, 2, 25); // type 22 = promote_reply, 25 bytes
    Bytes promoted_body{
        0x00, 0x00, 0x00, 0x00,                         // ok, no message
        0x01,                                           // previous state consistent
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // previous generation 3
        0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // generation 4
        0x01, 0x00, 0x00, 0x00,                         // one session ended
    };
    promoted.insert(promoted.end(), promoted_body.begin(), promoted_body.end());
    check_reply(protocol::PromoteReply{protocol::Status::ok, "", protocol::ReplicaState::consistent,
                                       3, 4, 1},
                2, promoted);

    Bytes demote = digest_header(0x17, 3, 11); // type 23 = demote, 11 bytes
    Bytes demote_body{
        0x01, 0x00, 'b',                                // pool_set "b"
        0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // generation 4
    };
    demote.insert(demote.end(), demote_body.begin(), demote_body.end());
    check_request(protocol::DemoteRequest{"b", 4}, 3, demote);

    Bytes demoted = digest_header(0x18, 3, 13); // type 24 = demote_reply, 13 bytes
    Bytes demoted_body{
        0x00, 0x00, 0x00, 0x00,                         // ok, no message
        0x01,                                           // consistent
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // generation 3
    };
    demoted.insert(demoted.end(), demoted_body.begin(), demoted_body.end());
    check_reply(
        protocol::DemoteReply{protocol::Status::ok, "", protocol::ReplicaState::consistent, 3}, 3,
        demoted);

    protocol::RejoinRequest rejoin{"b", 5, {}, {}};
    rejoin.poolset_uuid.fill(0x11);
    rejoin.primary_uuid.fill(0x22);
    Bytes rejoin_frame = digest_header(0x19, 4, 43); // type 25 = rejoin, 43 bytes
    Bytes rejoin_body{
        0x01, 0x00, 'b',                                // pool_set "b"
        0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // generation 5
    };
    append(rejoin_body, 16, 0x11); // pool set UUID
    append(rejoin_body, 16, 0x22); // primary's UUID
    rejoin_frame.insert(rejoin_frame.end(), rejoin_body.begin(), rejoin_body.end());
    check_request(rejoin, 4, rejoin_frame);

    protocol::RejoinReply rejoined{
        protocol::Status::ok, "", {}, protocol::ReplicaState::outdated, 5};
    rejoined.replica_uuid.fill(0x33);
    Bytes rejoined_frame = digest_header(0x1a, 4, 29); // type 26 = rejoin_reply, 29 bytes
    Bytes rejoined_body{0x00, 0x00, 0x00, 0x00};
    append(rejoined_body, 16, 0x33);                                           // the replica's UUID
    Bytes rejoined_tail{0x03, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}; // outdated, gen 5
    rejoined_body.insert(rejoined_body.end(), rejoined_tail.begin(), rejoined_tail.end());
    rejoined_frame.insert(rejoined_frame.end(), rejoined_body.begin(), rejoined_body.end());
    check_reply(rejoined, 4, rejoined_frame);

    protocol::AttachReplicaRequest attach{"b", {}};
    attach.replica_uuid.fill(0x33);
    Bytes attach_frame = digest_header(0x1b, 5, 19); // type 27 = attach_replica, 19 bytes
    Bytes attach_body{0x01, 0x00, 'b'};
    append(attach_body, 16, 0x33);
    attach_frame.insert(attach_frame.end(), attach_body.begin(), attach_body.end());
    check_request(attach, 5, attach_frame);

    protocol::AttachReplicaReply attached;
    attached.poolset_uuid.fill(0x11);
    attached.primary_uuid.fill(0x22);
    attached.replica_uuid.fill(0x33);
    attached.generation = 5;
    attached.in_use = true;
    Bytes attached_frame = digest_header(0x1c, 5, 62); // type 28 = attach_replica_reply
    Bytes attached_body{0x00, 0x00, 0x00, 0x00};
    append(attached_body, 16, 0x11);
    append(attached_body, 16, 0x22);
    append(attached_body, 16, 0x33);
    Bytes attached_tail{
        0x04,                                           // promoted
        0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // generation 5
        0x02,                                           // flags: in use
    };
    attached_body.insert(attached_body.end(), attached_tail.begin(), attached_tail.end());
    attached_frame.insert(attached_frame.end(), attached_body.begin(), attached_body.end());
    check_reply(attached, 5, attached_frame);
}
