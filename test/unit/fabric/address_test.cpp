// SPDX-License-Identifier: BSD-3-Clause
#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>

#include "fabric/address.h"

using namespace rpmem::fabric;

TEST_CASE("IPv4 and IPv6 addresses print with their port", "[fabric][address]") {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(7636);
    REQUIRE(inet_pton(AF_INET, "10.0.0.2", &in.sin_addr) == 1);
    CHECK(format_address(&in, sizeof in) == "10.0.0.2:7636");
    CHECK(address_port(&in, sizeof in) == 7636);

    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(1);
    REQUIRE(inet_pton(AF_INET6, "fd00::2", &in6.sin6_addr) == 1);
    CHECK(format_address(&in6, sizeof in6) == "[fd00::2]:1");
    CHECK(address_port(&in6, sizeof in6) == 1);
}

TEST_CASE("anything else is an unknown address, not a crash", "[fabric][address]") {
    CHECK(format_address(nullptr, 0) == "(unknown address)");
    sockaddr_in in{};
    in.sin_family = AF_INET;
    CHECK(format_address(&in, sizeof in - 1) == "(unknown address)");
    CHECK_FALSE(address_port(&in, 1).has_value());
    sockaddr_in6 other{};
    other.sin6_family = AF_UNIX;
    CHECK(format_address(&other, sizeof other) == "(unknown address)");
}
