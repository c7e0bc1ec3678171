// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/lane_binding.h"

using namespace rpmem::protocol;

TEST_CASE("lane binding golden bytes and round trip") {
    LaneBinding binding;
    for (std::size_t i = 0; i < binding.token.size(); ++i)
        binding.token[i] = static_cast<std::uint8_t>(0xa0 + i);
    binding.lane = 0x01020304;
    auto bytes = encode(binding);
    REQUIRE(bytes.size() == 44);
    CHECK(bytes[0] == std::byte{'R'});
    CHECK(bytes[3] == std::byte{'L'});
    CHECK(bytes[4] == std::byte{1});
    CHECK(bytes[8] == std::byte{0xa0});
    CHECK(bytes[39] == std::byte{0xbf});
    CHECK(bytes[40] == std::byte{0x04});
    CHECK(bytes[43] == std::byte{0x01});

    std::vector<std::byte> padded(bytes.begin(), bytes.end());
    padded.resize(64); // providers may pad private data
    auto decoded = decode_lane_binding(padded);
    REQUIRE(decoded);
    CHECK(decoded->lane == binding.lane);
    CHECK(same_token(decoded->token, binding.token));
}

TEST_CASE("malformed lane bindings are refused") {
    auto good = encode(LaneBinding{});
    std::vector<std::byte> short_one(good.begin(), good.end() - 1);
    CHECK(decode_lane_binding(short_one).error().errno_value() == EPROTO);

    auto bad_magic = good;
    bad_magic[0] = std::byte{'X'};
    CHECK_THAT(decode_lane_binding(bad_magic).error().message(), Catch::Contains("magic"));

    auto bad_version = good;
    bad_version[4] = std::byte{2};
    CHECK_THAT(decode_lane_binding(bad_version).error().message(), Catch::Contains("version 2"));
}

TEST_CASE("token comparison") {
    LaneBinding a, b;
    CHECK(same_token(a.token, b.token));
    b.token[31] = 1;
    CHECK_FALSE(same_token(a.token, b.token));
}
