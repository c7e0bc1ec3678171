// SPDX-License-Identifier: BSD-3-Clause
// The negotiation rules of protocol/version.h, as both ends apply them.
#include <catch2/catch.hpp>

#include "protocol/version.h"

using namespace rpmem::protocol;

TEST_CASE("the server picks the highest version both ranges hold", "[protocol][version]") {
    CHECK(ranges_meet(kMinProtocolVersion, kProtocolVersion));
    CHECK(agreed_version(kMinProtocolVersion, kProtocolVersion) == kProtocolVersion);
    // A newer client that still speaks this build's versions gets this build's highest.
    CHECK(ranges_meet(kMinProtocolVersion, kProtocolVersion + 7));
    CHECK(agreed_version(kMinProtocolVersion, kProtocolVersion + 7) == kProtocolVersion);
    // Ranges that do not meet, or are upside down, are refused before any choice.
    CHECK_FALSE(ranges_meet(kProtocolVersion + 1, kProtocolVersion + 9));
    CHECK_FALSE(ranges_meet(0, kMinProtocolVersion - 1));
    CHECK_FALSE(ranges_meet(kProtocolVersion, kMinProtocolVersion - 1));
    CHECK(speaks(kProtocolVersion));
    CHECK_FALSE(speaks(kProtocolVersion + 1));
}

TEST_CASE("capabilities: the server answers what both have, the client accepts no more",
          "[protocol][version]") {
    const auto heartbeat = static_cast<std::uint64_t>(Capability::heartbeat);
    const auto status = static_cast<std::uint64_t>(Capability::status);
    CHECK(shared_capabilities(0) == 0);
    CHECK(shared_capabilities(heartbeat) == heartbeat);
    CHECK(shared_capabilities(heartbeat | (1ULL << 40)) == heartbeat); // unknown bits ignored
    CHECK(shared_capabilities(~0ULL) == kCapabilities);
    CHECK(offered_all(heartbeat | status));
    CHECK(offered_all(0));
    CHECK_FALSE(offered_all(1ULL << 40));
}
