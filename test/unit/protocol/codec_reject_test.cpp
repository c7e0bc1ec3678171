// SPDX-License-Identifier: BSD-3-Clause
// What the decoder must refuse, and with which status: truncated and oversized frames, foreign
// versions, unknown types, bad strings, counts over their limit, unknown enum values and flag
// bits, trailing bytes, and messages travelling the wrong way. The encoder refuses to build
// what the decoder would refuse.
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/codec.h"
#include "protocol/message_limits.h"

namespace protocol = rpmem::protocol;
using Bytes = std::vector<std::uint8_t>;
using protocol::MessageType;
using protocol::Status;

namespace {

void put16(Bytes& b, std::size_t at, std::uint16_t v) {
    b[at] = static_cast<std::uint8_t>(v);
    b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}

void put32(Bytes& b, std::size_t at, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i)
        b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

Bytes frame_of(const protocol::Request& request) {
    auto frame = protocol::encode(request, 1);
    REQUIRE(frame);
    return *frame;
}

Bytes frame_of(const protocol::Reply& reply) {
    auto frame = protocol::encode(reply, 1);
    REQUIRE(frame);
    return *frame;
}

// A frame with the given header fields and body, bypassing the encoder.
Bytes raw_frame(std::uint16_t type, const Bytes& body,
                std::uint16_t version = protocol::kProtocolVersion) {
    Bytes b{0x52, 0x50, 0x4d, 0x43, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    put16(b, 4, version);
    put16(b, 6, type);
    put32(b, 12, static_cast<std::uint32_t>(body.size()));
    b.insert(b.end(), body.begin(), body.end());
    return b;
}

// Asserts a request frame is refused with `status`, and the message mentions `needle`.
void check_request_refused(const Bytes& frame, Status status, const std::string& needle) {
    auto decoded = protocol::decode_request_frame(frame);
    REQUIRE_FALSE(decoded);
    INFO(decoded.error().message());
    CHECK(decoded.error().source() == rpmem::ErrorSource::protocol);
    CHECK(decoded.error().native_code() == static_cast<int>(status));
    CHECK(decoded.error().errno_value() == protocol::errno_of(status));
    CHECK(decoded.error().message().find(needle) != std::string::npos);
}

void check_reply_refused(const Bytes& frame, const std::string& needle) {
    auto decoded = protocol::decode_reply_frame(frame);
    REQUIRE_FALSE(decoded);
    INFO(decoded.error().message());
    CHECK(decoded.error().native_code() == static_cast<int>(Status::bad_message));
    CHECK(decoded.error().message().find(needle) != std::string::npos);
}

protocol::CreateRequest sample_create() {
    protocol::CreateRequest create;
    create.pool_set = "pool.set";
    create.pool_size = 1 << 20;
    create.lanes = 2;
    create.attributes.major = 6;
    return create;
}

} // namespace

TEST_CASE("every truncation of a frame is refused") {
    Bytes frame = frame_of(sample_create());
    for (std::size_t length = 0; length < frame.size(); ++length) {
        CAPTURE(length);
        auto decoded = protocol::decode_request_frame({frame.data(), length});
        REQUIRE_FALSE(decoded);
        CHECK(decoded.error().errno_value() == EPROTO);
    }
}

TEST_CASE("a body shorter than its fields is refused even when the header agrees") {
    Bytes frame = frame_of(sample_create());
    // Cut the attributes short and make the header announce exactly what is left. (erase, not
    // resize: GCC 12 at -O1 takes resize's fill of a size - 10 for an overflow.)
    frame.erase(frame.end() - 10, frame.end());
    put32(frame, 12, static_cast<std::uint32_t>(frame.size() - protocol::kFrameHeaderSize));
    check_request_refused(frame, Status::bad_message, "attributes.user_flags: truncated");
}

TEST_CASE("bytes after the last field are refused") {
    Bytes frame = frame_of(protocol::RemoveRequest{"p", false, false});
    frame.push_back(0);
    put32(frame, 12, static_cast<std::uint32_t>(frame.size() - protocol::kFrameHeaderSize));
    check_request_refused(frame, Status::bad_message, "1 unexpected bytes after the last field");
}

TEST_CASE("oversized frames are refused from the header alone") {
    Bytes header = frame_of(protocol::Ping{});
    put32(header, 12, 1); // ping bodies are empty
    check_request_refused(header, Status::bad_message, "exceeds the limit of 0");

    put16(header, 6, static_cast<std::uint16_t>(MessageType::create));
    put32(header, 12, 0xffffffff); // and no buffer of 4 GiB is ever allocated
    check_request_refused(header, Status::bad_message, "4294967295 bytes exceeds the limit");

    put32(header, 12,
          static_cast<std::uint32_t>(protocol::max_body_length(MessageType::create) + 1));
    check_request_refused(header, Status::bad_message, "exceeds the limit");
}

TEST_CASE("a foreign protocol version is refused with protocol_mismatch") {
    Bytes frame = frame_of(sample_create());
    put16(frame, 4, 1); // version 1 was never released; this build speaks 2 only
    check_request_refused(frame, Status::protocol_mismatch, "protocol version 1 not supported");
    put16(frame, 4, 3);
    check_request_refused(frame, Status::protocol_mismatch, "protocol version 3 not supported");
    put16(frame, 4, 0);
    check_request_refused(frame, Status::protocol_mismatch, "version 0");

    // Validation order: version before type, so an unknown type in a foreign version is a
    // version mismatch.
    put16(frame, 6, 99);
    check_request_refused(frame, Status::protocol_mismatch, "version 0");
}

TEST_CASE("hello is readable in any version so that versions can be negotiated") {
    Bytes frame = frame_of(protocol::Hello{5, 9, 0, "future"});
    put16(frame, 4, 9);
    auto decoded = protocol::decode_request_frame(frame);
    REQUIRE(decoded);
    CHECK(std::get<protocol::Hello>(decoded->message).min_version == 5);
}

TEST_CASE("unknown message types and bad magic are refused") {
    for (std::uint16_t type : {0, 17, 33, 0x7fff, 0xffff}) {
        CAPTURE(type);
        check_request_refused(raw_frame(type, {}), Status::bad_message, "unknown message type");
    }
    Bytes frame = frame_of(protocol::Ping{});
    frame[0] = 'X';
    check_request_refused(frame, Status::bad_message, "bad magic");
}

TEST_CASE("replies where requests belong, and the reverse, are refused") {
    check_request_refused(frame_of(protocol::Pong{}), Status::bad_message,
                          "pong received where a request was expected");
    check_reply_refused(frame_of(protocol::Ping{}), "ping received where a reply was expected");
}

TEST_CASE("bad strings are refused") {
    SECTION("a NUL byte inside") {
        Bytes body{0x03, 0x00, 'a', 0x00, 'b', 0x00, 0x00, 0x00, 0x00};
        check_request_refused(raw_frame(11, body), Status::bad_message, "NUL byte");
    }
    SECTION("a length over the field's limit, even inside the frame limit") {
        // A software string of 65 bytes in a hello: the frame is within hello's size limit
        // only if the rest is shortened, so announce 65 and provide them.
        Bytes body{0x01, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x41, 0x00};
        body.resize(body.size() + 65, 's');
        body.resize(protocol::max_body_length(MessageType::hello)); // keep within the type limit
        check_request_refused(raw_frame(1, body), Status::bad_message,
                              "software: length 65 at offset 12 exceeds the limit of 64");
    }
    SECTION("a length running past the body") {
        Bytes body{0x10, 0x00, 'a', 'b', 0x00, 0x00, 0x00, 0x00};
        check_request_refused(raw_frame(11, body), Status::bad_message, "pool_set: truncated");
    }
}

TEST_CASE("a list count over its limit is refused before anything is read") {
    protocol::StatusReply status;
    Bytes frame = frame_of(status);
    // The session count is the last field of a status reply without sessions.
    std::size_t count_at = frame.size() - 2;
    REQUIRE(frame[count_at] == 0);
    put16(frame, count_at, static_cast<std::uint16_t>(protocol::kMaxStatusSessions + 1));
    check_reply_refused(frame, "session_list count: 17 exceeds the limit of 16");

    Bytes events = frame_of(protocol::EventsReply{});
    put16(events, events.size() - 2, static_cast<std::uint16_t>(protocol::kMaxEventsPerReply + 1));
    check_reply_refused(events, "events count: 17 exceeds the limit of 16");
}

TEST_CASE("event and resync fields with values the protocol does not define are refused") {
    SECTION("an unknown event kind") {
        protocol::EventsReply reply;
        reply.events.push_back(protocol::DaemonEvent{});
        Bytes frame = frame_of(reply);
        // After the header, status (2 + 2), two u64 sequences, the u16 count, two u64s.
        const std::size_t kind_at = protocol::kFrameHeaderSize + 4 + 16 + 2 + 16;
        REQUIRE(frame[kind_at] == 1);
        put16(frame, kind_at, 99);
        check_reply_refused(frame, "event.kind: unknown kind 99");
    }
    SECTION("a state without has_state") {
        protocol::EventsReply reply;
        reply.events.push_back(protocol::DaemonEvent{});
        Bytes frame = frame_of(reply);
        // has_state and state follow the three empty strings (2 bytes each) after session_id.
        const std::size_t state_at = protocol::kFrameHeaderSize + 4 + 16 + 2 + 16 + 2 + 8 + 6 + 1;
        REQUIRE(frame[state_at] == 0);
        frame[state_at] = 2;
        check_reply_refused(frame, "event.state: set without has_state");
    }
    SECTION("an unknown resync phase") {
        Bytes frame = frame_of(protocol::ResyncReport{});
        frame[protocol::kFrameHeaderSize] = 9;
        check_request_refused(frame, protocol::Status::bad_message, "phase: unknown phase 9");
    }
    SECTION("more done than total") {
        Bytes frame = frame_of(protocol::ResyncReport{protocol::ResyncPhase::progress, 0, 0});
        frame[protocol::kFrameHeaderSize + 1] = 1;
        check_request_refused(frame, protocol::Status::bad_message,
                              "done_bytes: 1 exceed total_bytes 0");
    }
}

TEST_CASE("unknown enum values, booleans and flag bits are refused") {
    SECTION("provider") {
        Bytes frame = frame_of(protocol::OpenRequest{"p", 1, 1, {}, {}});
        frame[frame.size() - 8 - 2] = 4; // before the u64 expected_generation
        check_request_refused(frame, Status::bad_message, "unknown provider 4");
    }
    SECTION("persistence method") {
        Bytes frame = frame_of(protocol::OpenRequest{"p", 1, 1, {}, {}});
        frame[frame.size() - 8 - 1] = 0xff;
        check_request_refused(frame, Status::bad_message, "unknown persistence method 255");
    }
    SECTION("status") {
        Bytes frame = frame_of(protocol::CloseReply{});
        put16(frame, protocol::kFrameHeaderSize, protocol::kMaxStatusValue + 1);
        check_reply_refused(frame, "unknown status 20");
    }
    SECTION("close flags") {
        Bytes frame = frame_of(protocol::CloseRequest{});
        frame[protocol::kFrameHeaderSize] = 0x08;
        check_request_refused(frame, Status::bad_message, "unknown flag bits 0x8");
        frame[protocol::kFrameHeaderSize] = 0x06; // in_sync and untouched
        check_request_refused(frame, Status::bad_message, "in_sync and untouched exclude");
    }
    SECTION("replica state") {
        Bytes frame = frame_of(protocol::OpenReply{});
        frame[frame.size() - 9] = 0x05;
        check_reply_refused(frame, "unknown replica state 5");
        frame[frame.size() - 9] = 0x00;
        check_reply_refused(frame, "unknown replica state 0");
    }
    SECTION("remove flags") {
        Bytes frame = frame_of(protocol::RemoveRequest{"p", true, true});
        frame[frame.size() - 1] = 0x80;
        check_request_refused(frame, Status::bad_message, "unknown flag bits 0x80000000");
    }
    SECTION("a boolean other than 0 or 1") {
        protocol::CreateReply reply;
        reply.data_path.provider = "p";
        reply.data_path.host = "h";
        Bytes frame = frame_of(reply);
        // status(2) message(2) provider(3) host(3) port(2) base(8) key(8): then the boolean.
        std::size_t at = protocol::kFrameHeaderSize + 2 + 2 + 3 + 3 + 2 + 8 + 8;
        REQUIRE(frame[at] == 0);
        frame[at] = 2;
        check_reply_refused(frame, "offset_addressing: 2");
    }
}

TEST_CASE("the encoder refuses what the decoder would refuse") {
    protocol::CreateRequest create = sample_create();
    create.pool_set = std::string(protocol::kMaxPoolSetNameLength + 1, 'n');
    auto frame = protocol::encode(protocol::Request(create), 1);
    REQUIRE_FALSE(frame);
    CHECK(frame.error().errno_value() == EINVAL);
    CHECK(frame.error().message() ==
          "encoding create: pool_set is 4096 bytes long, the limit is 4095");

    create.pool_set = std::string("a\0b", 3);
    frame = protocol::encode(protocol::Request(create), 1);
    REQUIRE_FALSE(frame);
    CHECK(frame.error().message() == "encoding create: pool_set contains a NUL byte");

    protocol::StatusReply status;
    status.session_list.assign(protocol::kMaxStatusSessions + 1, protocol::SessionStatus{});
    frame = protocol::encode(protocol::Reply(status), 1);
    REQUIRE_FALSE(frame);
    CHECK(frame.error().message() ==
          "encoding status_reply: session_list has 17 entries, the limit is 16");
}

namespace {

// A digest request's body as raw bytes: u64 offset, u64 length, u32 extent_size.
Bytes digest_body(std::uint64_t offset, std::uint64_t length, std::uint32_t extent_size) {
    Bytes body(20);
    for (std::size_t i = 0; i < 8; ++i) {
        body[i] = static_cast<std::uint8_t>(offset >> (8 * i));
        body[8 + i] = static_cast<std::uint8_t>(length >> (8 * i));
    }
    put32(body, 16, extent_size);
    return body;
}

void check_digest_refused(std::uint64_t offset, std::uint64_t length, std::uint32_t extent_size,
                          const std::string& needle) {
    check_request_refused(raw_frame(19, digest_body(offset, length, extent_size)),
                          Status::bad_message, needle);
    // The encoder refuses to build it in the first place.
    auto frame = protocol::encode(
        protocol::Request(protocol::DigestRequest{offset, length, extent_size}), 1);
    REQUIRE_FALSE(frame);
    CHECK(frame.error().errno_value() == EINVAL);
    CHECK_THAT(frame.error().message(), Catch::Contains(needle));
}

} // namespace

TEST_CASE("digest requests breaking the limits are refused, naming the field") {
    const std::uint32_t mib = 1 << 20;
    SECTION("extent sizes that are no power of two or out of range") {
        check_digest_refused(4096, mib, 0, "digest: extent_size: 0 is not a power of two");
        check_digest_refused(4096, mib, 3 * 4096, "extent_size: 12288 is not a power of two");
        check_digest_refused(4096, mib, 2048,
                             "extent_size: 2048 is not a power of two from "
                             "4096 to 67108864");
        check_digest_refused(4096, mib, 128 * mib, "extent_size: 134217728");
    }
    SECTION("an empty range") {
        check_digest_refused(4096, 0, 4096, "length: 0");
    }
    SECTION("more extents than one reply carries") {
        std::uint64_t length = std::uint64_t{protocol::kMaxDigestExtents} * 4096 + 1;
        check_digest_refused(4096, length, 4096, "length: 33554433 bytes exceed");
    }
    SECTION("more bytes than one request may hash") {
        check_digest_refused(4096, protocol::kMaxDigestRangeLength + 64 * mib, 64 * mib,
                             "at most 8192 extents and 134217728 bytes");
    }
    SECTION("a range that wraps around") {
        check_digest_refused(~0ULL - 4095, 8192, 4096,
                             "offset: 18446744073709547520 + length "
                             "8192 overflows");
    }
    SECTION("the limits themselves are accepted") {
        auto frame = protocol::encode(protocol::Request(protocol::DigestRequest{
                                          0, protocol::kMaxDigestRangeLength, 64 * mib}),
                                      1);
        REQUIRE(frame);
        CHECK(protocol::decode_request_frame(*frame));
        frame = protocol::encode(
            protocol::Request(protocol::DigestRequest{~0ULL - protocol::kMaxDigestExtents * 4096,
                                                      protocol::kMaxDigestExtents * 4096, 4096}),
            1);
        REQUIRE(frame);
        CHECK(protocol::decode_request_frame(*frame));
    }
}

TEST_CASE("a digest reply with more digests than the limit is refused before they are read") {
    Bytes frame = frame_of(protocol::DigestReply{Status::ok, "", {1}});
    // status(2) message(2), then the count.
    std::size_t count_at = protocol::kFrameHeaderSize + 4;
    REQUIRE(frame[count_at] == 1);
    put32(frame, count_at, static_cast<std::uint32_t>(protocol::kMaxDigestExtents + 1));
    check_reply_refused(frame, "digests count: 8193 exceeds the limit of 8192");

    protocol::DigestReply many;
    many.digests.assign(protocol::kMaxDigestExtents + 1, 0);
    auto encoded = protocol::encode(protocol::Reply(many), 1);
    REQUIRE_FALSE(encoded);
    CHECK(encoded.error().message() ==
          "encoding digest_reply: digests has 8193 entries, the limit is 8192");
}

TEST_CASE("failover messages: unknown flags, states and a rejoin without a generation") {
    SECTION("an unknown promote flag") {
        Bytes frame = frame_of(protocol::PromoteRequest{"a", false});
        frame[frame.size() - 4] = 0x02;
        check_request_refused(frame, Status::bad_message, "flags: unknown flag bits 0x2");
    }
    SECTION("a rejoin at generation 0") {
        Bytes frame = frame_of(protocol::RejoinRequest{"a", 1, {}, {}});
        // The u64 generation follows the pool set name (2 + 1 bytes).
        frame[protocol::kFrameHeaderSize + 3] = 0;
        check_request_refused(frame, Status::bad_message,
                              "generation: 0: a rejoin needs the new primary's generation");
        auto encoded = protocol::encode(protocol::RejoinRequest{"a", 0, {}, {}}, 1);
        REQUIRE_FALSE(encoded);
    }
    SECTION("an unknown state in a promote reply") {
        Bytes frame = frame_of(protocol::PromoteReply{});
        frame[protocol::kFrameHeaderSize + 4] = 9;
        check_reply_refused(frame, "state");
    }
    SECTION("a demote reply cut short") {
        Bytes frame = frame_of(protocol::DemoteReply{});
        frame.pop_back();
        put32(frame, 12, static_cast<std::uint32_t>(frame.size() - protocol::kFrameHeaderSize));
        check_reply_refused(frame, "generation");
    }
    SECTION("an unknown role flag") {
        Bytes frame = frame_of(protocol::AttachReplicaReply{});
        frame.back() = 0x04;
        check_reply_refused(frame, "flags: unknown flag bits 0x4");
    }
    SECTION("an attach request travelling as a reply") {
        Bytes frame = frame_of(protocol::AttachReplicaRequest{"a", {}});
        CHECK_FALSE(protocol::decode_reply_frame(frame));
    }
}
