// SPDX-License-Identifier: BSD-3-Clause
#include <set>

#include <catch2/catch.hpp>

#include "channel/session_token.h"
#include "protocol/session_token.h"

using rpmem::channel::make_session_token;
using rpmem::protocol::same_token;

TEST_CASE("session tokens are fresh each time and compare by content") {
    std::set<rpmem::protocol::SessionToken> seen;
    for (int i = 0; i < 64; ++i) {
        auto token = make_session_token();
        REQUIRE(token);
        CHECK(seen.insert(*token).second);
    }
    auto a = make_session_token();
    REQUIRE(a);
    auto b = *a;
    CHECK(same_token(*a, b));
    b[31] ^= 1;
    CHECK_FALSE(same_token(*a, b));
    b = *a;
    b[0] ^= 0x80;
    CHECK_FALSE(same_token(*a, b));
}
