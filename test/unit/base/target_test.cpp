// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>

#include <catch2/catch.hpp>

#include "base/target.h"

using rpmem::parse_target;
using rpmem::Target;

TEST_CASE("parse_target accepts librpmem's target forms", "[target]") {
    struct Case {
        const char* text;
        Target expected;
    };
    const Case cases[] = {
        {"host", {"", "host", std::nullopt}},
        {"user@host", {"user", "host", std::nullopt}},
        {"host:7636", {"", "host", 7636}},
        {"user@host:1", {"user", "host", 1}},
        {"user@10.0.0.2:65535", {"user", "10.0.0.2", 65535}},
        {"[::1]", {"", "::1", std::nullopt}},
        {"[fe80::1%eth0]:22", {"", "fe80::1%eth0", 22}},
        {"me@[fd00::2]:7636", {"me", "fd00::2", 7636}},
        {"fd00::2", {"", "fd00::2", std::nullopt}}, // bare IPv6: several ':' and no port
        {"user@::1", {"user", "::1", std::nullopt}},
        {"backup.example.com", {"", "backup.example.com", std::nullopt}},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        auto target = parse_target(c.text);
        REQUIRE(target);
        CHECK(*target == c.expected);
        // The canonical form parses back to the same value.
        auto again = parse_target(target->to_string());
        REQUIRE(again);
        CHECK(*again == c.expected);
    }
}

TEST_CASE("Target::to_string brackets IPv6 hosts", "[target]") {
    CHECK(Target{"", "::1", 7636}.to_string() == "[::1]:7636");
    CHECK(Target{"u", "::1", std::nullopt}.to_string() == "u@[::1]");
    CHECK(Target{"u", "h", 22}.to_string() == "u@h:22");
    CHECK(Target{"", "h", std::nullopt}.to_string() == "h");
}

TEST_CASE("parse_target rejects malformed targets with a reason", "[target]") {
    struct Case {
        const char* text;
        const char* reason;
    };
    const Case cases[] = {
        {"", "empty host"},
        {"@host", "empty user"},
        {"user@", "empty host"},
        {"host:", "port must be a number"},
        {"host:0", "port must be a number"},
        {"host:65536", "port must be a number"},
        {"host:123456", "port must be a number"},
        {"host:-1", "port must be a number"},
        {"host:22a", "port must be a number"},
        {"[::1", "without a closing"},
        {"[::1]x", "expected ':PORT'"},
        {"[::1]:", "port must be a number"},
        {"[]", "brackets are only for IPv6"},
        {"[host]", "brackets are only for IPv6"},
        {"a@b@c", "forbidden character"},
        {"user name@host", "forbidden character"},
        {"host\tname", "forbidden character"},
        {"host/x", "forbidden character"},
        {":22", "empty host"},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        auto target = parse_target(c.text);
        REQUIRE_FALSE(target);
        CHECK(target.error().errno_value() == EINVAL);
        CHECK_THAT(target.error().message(), Catch::Contains(c.reason));
        CHECK_THAT(target.error().message(), Catch::Contains("invalid target"));
    }
}

TEST_CASE("parse_target enforces librpmem's length limits", "[target]") {
    std::string user(32, 'u');
    CHECK(parse_target(user + "@h"));
    CHECK_THAT(parse_target(user + "x@h").error().message(), Catch::Contains("longer than 32"));
    std::string host(255, 'h');
    CHECK(parse_target(host));
    CHECK_THAT(parse_target(host + "h").error().message(), Catch::Contains("longer than 255"));
}
