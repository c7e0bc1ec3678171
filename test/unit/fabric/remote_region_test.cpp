// SPDX-License-Identifier: BSD-3-Clause
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "fabric/memory_region.h"

using rpmem::fabric::RemoteRegion;

TEST_CASE("remote addresses are the base plus the offset", "[fabric][region]") {
    // Offset addressing (no FI_MR_VIRT_ADDR): the base is 0.
    const RemoteRegion offsets{0, 7, 8192};
    CHECK(offsets.remote_address(0) == 0);
    CHECK(offsets.remote_address(4096) == 4096);
    // Virtual addressing: the base is where the target mapped the region.
    const RemoteRegion virtual_addresses{0x7f0000001000, 7, 8192};
    CHECK(virtual_addresses.remote_address(24) == 0x7f0000001018);
}

TEST_CASE("a region contains exactly its own bytes", "[fabric][region]") {
    const RemoteRegion region{0, 1, 4096};
    CHECK(region.contains(0, 4096));
    CHECK(region.contains(4095, 1));
    CHECK(region.contains(4096, 0));
    CHECK_FALSE(region.contains(4096, 1));
    CHECK_FALSE(region.contains(1, 4096));
    CHECK_FALSE(region.contains(4097, 0));
    // No wrap-around from huge values.
    constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
    CHECK_FALSE(region.contains(kMax, 2));
    CHECK_FALSE(region.contains(8, kMax));
}
