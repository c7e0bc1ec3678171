// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/lane_message.h"

using namespace rpmem::protocol;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (int value : values)
        out.push_back(static_cast<std::byte>(value));
    return out;
}

std::vector<std::byte> encoded(const LaneRequest& request, std::size_t data_length = 0) {
    std::vector<std::byte> message(kLaneHeaderSize + data_length, std::byte{0x5a});
    encode(request, message);
    return message;
}

constexpr std::uint64_t kPool = 1 << 20;
constexpr std::uint64_t kInline = 4096;
constexpr std::uint64_t kHeader = 4096;
constexpr LaneLimits kLimits{kPool, kInline, kHeader};

} // namespace

TEST_CASE("request header golden bytes") {
    LaneRequest request{.operation = LaneOperation::persist_inline,
                        .flags = kAckRequested,
                        .sequence = 0x01020304,
                        .offset = 0x1122334455667788,
                        .length = 0x40};
    std::array<std::byte, kLaneHeaderSize> header{};
    encode(request, header);
    auto expected = bytes({0x01, 0x01, 0x00, 0x00, 0x04, 0x03, 0x02, 0x01, // op, flags, seq
                           0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // offset
                           0x40, 0,    0,    0,    0,    0,    0,    0,    // length
                           0,    0,    0,    0,    0,    0,    0,    0});  // reserved
    CHECK(std::vector<std::byte>(header.begin(), header.end()) == expected);
}

TEST_CASE("reply golden bytes and round trip") {
    std::array<std::byte, kLaneReplySize> out{};
    encode(LaneReply{.sequence = 7, .status = EIO}, out);
    CHECK(std::vector<std::byte>(out.begin(), out.end()) ==
          bytes({7, 0, 0, 0, EIO, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
    auto reply = decode_lane_reply(out);
    REQUIRE(reply);
    CHECK(reply->sequence == 7);
    CHECK(reply->status == EIO);

    CHECK_FALSE(decode_lane_reply(std::span(out).first(8)));
    out[12] = std::byte{1};
    CHECK_FALSE(decode_lane_reply(out));
}

TEST_CASE("valid requests decode to what was encoded") {
    LaneRequest inline_persist{.operation = LaneOperation::persist_inline,
                               .flags = kAckRequested,
                               .sequence = 9,
                               .offset = kHeader,
                               .length = 64};
    auto message = encoded(inline_persist, 64);
    auto decoded = decode_lane_request(message, kLimits).result;
    REQUIRE(decoded);
    CHECK(decoded->operation == LaneOperation::persist_inline);
    CHECK(decoded->wants_ack());
    CHECK(decoded->sequence == 9);
    CHECK(decoded->offset == kHeader);
    CHECK(decoded->length == 64);

    LaneRequest flush{
        .operation = LaneOperation::flush, .offset = kHeader, .length = kPool - kHeader};
    CHECK(decode_lane_request(encoded(flush), kLimits).result);
    // The header is not the lane's to flush either: a worker has not even mapped it.
    LaneRequest header_flush{.operation = LaneOperation::flush, .offset = 0, .length = kPool};
    auto refused = decode_lane_request(encoded(header_flush), kLimits);
    REQUIRE_FALSE(refused.result);
    CHECK(refused.result.error().errno_value() == EINVAL);

    LaneRequest barrier{.operation = LaneOperation::barrier, .flags = kAckRequested};
    CHECK(decode_lane_request(encoded(barrier), kLimits).result);
}

TEST_CASE("a flush list round-trips and each of its ranges is checked like a flush") {
    const std::vector<LaneRange> ranges{{kHeader, 64}, {kPool - 8, 8}, {kHeader * 3, 0}};
    const std::uint64_t size = ranges.size() * kLaneRangeSize;
    auto message =
        encoded({.operation = LaneOperation::flush_list, .sequence = 5, .length = size}, size);
    encode(std::span<const LaneRange>(ranges), std::span(message).subspan(kLaneHeaderSize));
    // Golden bytes of the first range: offset, then length, little-endian.
    CHECK(std::vector<std::byte>(message.begin() + kLaneHeaderSize,
                                 message.begin() + kLaneHeaderSize + kLaneRangeSize) ==
          bytes({0, 0x10, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0}));
    auto decoded = decode_lane_request(message, kLimits).result;
    REQUIRE(decoded);
    REQUIRE(flush_list_size(*decoded) == ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        CHECK(flush_list_range(message, i).offset == ranges[i].offset);
        CHECK(flush_list_range(message, i).length == ranges[i].length);
    }

    struct Case {
        std::vector<LaneRange> list;
        std::uint64_t offset;
        std::size_t extra;
        int error;
        const char* text;
    };
    auto [list, offset, extra, error, text] = GENERATE_COPY(
        Case{{}, 0, 0, EPROTO, "flush list of 0 bytes is not a positive multiple of 16"},
        Case{{{kHeader, 8}}, 0, 8, EPROTO, "flush list of 24 bytes"},
        Case{{{kHeader, 8}}, kHeader, 0, EPROTO, "flush list has offset 4096"},
        Case{{{kHeader, 8}, {0, 8}}, 0, 0, EINVAL, "flush list range 1: range [0, +8) overlaps"},
        Case{{{kPool, 1}}, 0, 0, EINVAL, "flush list range 0: range [1048576, +1) is outside"},
        Case{{{8, ~0ULL}}, 0, 0, EINVAL, "outside the pool"},
        Case{std::vector<LaneRange>(kInline / kLaneRangeSize + 1, LaneRange{kHeader, 8}), 0, 0,
             EPROTO, "more than the lane's 4096"});
    const std::uint64_t length = list.size() * kLaneRangeSize + extra;
    auto hostile = encoded(
        {.operation = LaneOperation::flush_list, .offset = offset, .length = length}, length);
    encode(std::span<const LaneRange>(list), std::span(hostile).subspan(kLaneHeaderSize));
    auto refused = decode_lane_request(hostile, kLimits).result;
    REQUIRE_FALSE(refused);
    CHECK(refused.error().errno_value() == error);
    CHECK_THAT(refused.error().message(), Catch::Contains(text));
}

TEST_CASE("hostile requests are refused, naming what is wrong") {
    struct Case {
        std::vector<std::byte> message;
        int error;
        const char* text;
    };
    LaneRequest good{.operation = LaneOperation::persist_inline, .offset = kHeader, .length = 8};
    auto with = [&](auto change, std::size_t data = 8) {
        auto message = encoded(good, data);
        change(message);
        return message;
    };
    auto [message, error, text] = GENERATE_COPY(
        Case{std::vector<std::byte>(kLaneHeaderSize - 1), EPROTO,
             "shorter than its 32-byte header"},
        Case{with([](auto& m) { m[0] = std::byte{0}; }), EPROTO, "unknown operation 0"},
        Case{with([](auto& m) { m[0] = std::byte{8}; }), EPROTO, "unknown operation 8"},
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
        Case{encoded(LaneRequest{.operation = LaneOperation::flush, .length = 8}, 8), EPROTO,
             "without data carries 8 bytes"},
        Case{encoded(LaneRequest{.operation = LaneOperation::flush, .offset = kPool, .length = 1}),
             EINVAL, "outside the pool"},
        Case{encoded(LaneRequest{.operation = LaneOperation::flush, .offset = 8, .length = ~0ULL}),
             EINVAL, "outside the pool"},
        Case{encoded(LaneRequest{.operation = LaneOperation::persist_inline,
                                 .offset = 4088,
                                 .length = 8},
                     8),
             EINVAL, "overlaps the pool header"});
    auto decoded = decode_lane_request(message, kLimits).result;
    REQUIRE_FALSE(decoded);
    CHECK(decoded.error().errno_value() == error);
    CHECK_THAT(decoded.error().message(), Catch::Contains(text));
}

namespace {

// A persist_records message of `records`, each with `fill` as its data.
std::vector<std::byte> record_message(const std::vector<LaneRecord>& records,
                                      std::byte fill = std::byte{0xab}, std::uint64_t behind = 0) {
    std::size_t size = 0;
    for (const LaneRecord& record : records)
        size += lane_record_size(record.length);
    auto message = encoded({.operation = LaneOperation::persist_records,
                            .flags = kAckRequested,
                            .sequence = 9,
                            .offset = behind,
                            .length = size},
                           size);
    std::size_t at = kLaneHeaderSize;
    for (const LaneRecord& record : records) {
        const std::vector<std::byte> data(record.length, fill);
        encode(record, data, std::span(message).subspan(at));
        at += lane_record_size(record.length);
    }
    return message;
}

} // namespace

TEST_CASE("a record list round-trips, padded to 8 bytes, its offset field free for the lag") {
    const std::vector<LaneRecord> records{
        {kHeader, 3, 0}, {kPool - 16, 16, kRecordDeep}, {kHeader + 1, 9, 0}};
    auto message = record_message(records, std::byte{0xab}, 123456);
    // Golden bytes of the first record: offset, length, flags, reserved, 3 bytes, 5 of padding.
    CHECK(std::vector<std::byte>(message.begin() + kLaneHeaderSize,
                                 message.begin() + kLaneHeaderSize + lane_record_size(3)) ==
          bytes({0,    0x10, 0,    0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, //
                 0xab, 0xab, 0xab, 0, 0, 0, 0, 0}));
    auto decoded = decode_lane_request(message, kLimits).result;
    REQUIRE(decoded);
    CHECK(decoded->offset == 123456);
    CHECK(decoded->wants_ack());
    std::size_t at = 0;
    for (const LaneRecord& expected : records) {
        REQUIRE(at < decoded->length);
        const LaneRecord record = lane_record_at(message, at);
        CHECK(record.offset == expected.offset);
        CHECK(record.length == expected.length);
        CHECK(record.flags == expected.flags);
        const auto data = lane_record_data(message, at, record);
        CHECK(data.size() == expected.length);
        CHECK(std::all_of(data.begin(), data.end(),
                          [](std::byte b) { return b == std::byte{0xab}; }));
        at += lane_record_size(record.length);
    }
    CHECK(at == decoded->length);
}

TEST_CASE("hostile record lists are refused, naming the record and what is wrong") {
    struct Case {
        std::vector<std::byte> message;
        int error;
        const char* text;
    };
    const auto two = [](auto change) {
        auto message = record_message({{kHeader, 8, 0}, {kHeader * 2, 5, 0}});
        change(message);
        return message;
    };
    constexpr std::size_t second = kLaneHeaderSize + 16 + 8; // where record 1 starts
    auto [message, error, text] = GENERATE_COPY(
        Case{record_message({}), EPROTO, "record list carries no record"},
        Case{two([](auto& m) { m[second + 12] = std::byte{2}; }), EPROTO,
             "record 1 (at byte 24): unknown flags 0x2"},
        Case{two([](auto& m) { m[second + 14] = std::byte{1}; }), EPROTO,
             "record 1 (at byte 24): non-zero reserved bytes"},
        Case{two([&](auto& m) { m[second + 16 + 6] = std::byte{1}; }), EPROTO,
             "record 1 (at byte 24): non-zero padding"},
        Case{two([&](auto& m) { m[second + 8] = std::byte{0}; }), EPROTO,
             "record 1 (at byte 24): no data"},
        Case{two([&](auto& m) { m[second + 8] = std::byte{9}; }), EPROTO,
             "record 1 (at byte 24): says 9 bytes of data, only 8 follow"},
        Case{record_message({{0, 8, 0}}), EINVAL, "record 0 (at byte 0): range [0, +8) overlaps"},
        Case{record_message({{kHeader, 8, 0}, {kPool - 4, 8, 0}}), EINVAL,
             "record 1 (at byte 24): range [1048572, +8) is outside"},
        Case{[] {
                 auto m = record_message({{kHeader, 8, 0}});
                 m.resize(m.size() + 8); // a header's half behind the last record
                 m[16] = std::byte{32};
                 return m;
             }(),
             EPROTO, "record 1 (at byte 24): shorter than its header"},
        Case{record_message({{kHeader, static_cast<std::uint32_t>(kInline), 0}}), EPROTO,
             "more than the lane's 4096"});
    auto decoded = decode_lane_request(message, kLimits).result;
    REQUIRE_FALSE(decoded);
    CHECK(decoded.error().errno_value() == error);
    CHECK_THAT(decoded.error().message(), Catch::Contains(text));
}
