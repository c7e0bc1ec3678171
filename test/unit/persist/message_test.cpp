// SPDX-License-Identifier: BSD-3-Clause
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "persist/message.h"

using namespace rpmem::persist;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (int value : values)
        out.push_back(static_cast<std::byte>(value));
    return out;
}

std::vector<std::byte> encoded(const Request& request, std::size_t data_length = 0) {
    std::vector<std::byte> message(kHeaderSize + data_length, std::byte{0x5a});
    encode(request, message);
    return message;
}

constexpr std::uint64_t kPool = 1 << 20;
constexpr std::uint64_t kInline = 4096;
constexpr std::uint64_t kHeader = 4096;

} // namespace

TEST_CASE("request header golden bytes") {
    Request request{.operation = Operation::persist_inline,
                    .flags = kAckRequested,
                    .sequence = 0x01020304,
                    .offset = 0x1122334455667788,
                    .length = 0x40};
    std::array<std::byte, kHeaderSize> header{};
    encode(request, header);
    auto expected = bytes({0x01, 0x01, 0x00, 0x00, 0x04, 0x03, 0x02, 0x01, // op, flags, seq
                           0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // offset
                           0x40, 0,    0,    0,    0,    0,    0,    0,    // length
                           0,    0,    0,    0,    0,    0,    0,    0});  // reserved
    CHECK(std::vector<std::byte>(header.begin(), header.end()) == expected);
}

TEST_CASE("reply golden bytes and round trip") {
    std::array<std::byte, kReplySize> out{};
    encode(Reply{.sequence = 7, .status = EIO}, out);
    CHECK(std::vector<std::byte>(out.begin(), out.end()) ==
          bytes({7, 0, 0, 0, EIO, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
    auto reply = decode_reply(out);
    REQUIRE(reply);
    CHECK(reply->sequence == 7);
    CHECK(reply->status == EIO);

    CHECK_FALSE(decode_reply(std::span(out).first(8)));
    out[12] = std::byte{1};
    CHECK_FALSE(decode_reply(out));
}

TEST_CASE("valid requests decode to what was encoded") {
    Request inline_persist{.operation = Operation::persist_inline,
                           .flags = kAckRequested,
                           .sequence = 9,
                           .offset = kHeader,
                           .length = 64};
    auto message = encoded(inline_persist, 64);
    auto decoded = decode_request(message, kPool, kInline, kHeader);
    REQUIRE(decoded);
    CHECK(decoded->operation == Operation::persist_inline);
    CHECK(decoded->wants_ack());
    CHECK(decoded->sequence == 9);
    CHECK(decoded->offset == kHeader);
    CHECK(decoded->length == 64);

    Request flush{.operation = Operation::flush, .offset = 0, .length = kPool};
    CHECK(decode_request(encoded(flush), kPool, kInline, kHeader)); // flushing the header is fine

    Request barrier{.operation = Operation::barrier, .flags = kAckRequested};
    CHECK(decode_request(encoded(barrier), kPool, kInline, kHeader));
}

TEST_CASE("hostile requests are refused, naming what is wrong") {
    struct Case {
        std::vector<std::byte> message;
        int error;
        const char* text;
    };
    Request good{.operation = Operation::persist_inline, .offset = kHeader, .length = 8};
    auto with = [&](auto change, std::size_t data = 8) {
        auto message = encoded(good, data);
        change(message);
        return message;
    };
    auto [message, error, text] = GENERATE_COPY(
        Case{std::vector<std::byte>(kHeaderSize - 1), EPROTO, "shorter than its 32-byte header"},
        Case{with([](auto& m) { m[0] = std::byte{0}; }), EPROTO, "unknown operation 0"},
        Case{with([](auto& m) { m[0] = std::byte{6}; }), EPROTO, "unknown operation 6"},
        Case{with([](auto& m) { m[1] = std::byte{2}; }), EPROTO, "unknown flags 0x2"},
        Case{with([](auto& m) { m[2] = std::byte{1}; }), EPROTO, "reserved"},
        Case{with([](auto& m) { m[31] = std::byte{1}; }), EPROTO, "reserved"},
        Case{with([](auto&) {}, 7), EPROTO, "says 8 bytes of data but 7 arrived"},
        Case{with(
                 [](auto& m) {
                     m[16] = std::byte{0};
                     m[17] = std::byte{0x20};
                 },
                 0x2000),
             EPROTO, "more than the lane's 4096"},
        Case{encoded(Request{.operation = Operation::flush, .length = 8}, 8), EPROTO,
             "without data carries 8 bytes"},
        Case{encoded(Request{.operation = Operation::flush, .offset = kPool, .length = 1}), EINVAL,
             "outside the pool"},
        Case{encoded(Request{.operation = Operation::flush, .offset = 8, .length = ~0ULL}), EINVAL,
             "outside the pool"},
        Case{encoded(Request{.operation = Operation::persist_inline, .offset = 4088, .length = 8},
                     8),
             EINVAL, "overlaps the pool header"});
    auto decoded = decode_request(message, kPool, kInline, kHeader);
    REQUIRE_FALSE(decoded);
    CHECK(decoded.error().errno_value() == error);
    CHECK_THAT(decoded.error().message(), Catch::Contains(text));
}
