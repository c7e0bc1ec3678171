// SPDX-License-Identifier: BSD-3-Clause
#include "pool_fixtures.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <new>

#include <catch2/catch.hpp>

#include "poolset/pool_header.h"

namespace rpmem::test {

std::string pool_set_text(const std::filesystem::path& directory, const std::string& prefix,
                          int parts, const std::string& part_size, const std::string& options) {
    std::string text = "PMEMPOOLSET\n";
    if (!options.empty())
        text += "OPTION " + options + "\n";
    for (int p = 0; p < parts; ++p)
        text += part_size + " " + (directory / (prefix + "." + std::to_string(p))).string() + "\n";
    return text;
}

void check_created_headers(const std::vector<poolset::PoolHeader>& headers,
                           const PoolAttributes& attributes) {
    const std::size_t count = headers.size();
    REQUIRE(count > 0);
    for (std::size_t p = 0; p < count; ++p) {
        CAPTURE(p);
        const poolset::PoolHeader& h = headers[p];
        CHECK(std::string(h.signature.data(), h.signature.size()) == std::string("PMEMOBJ\0", 8));
        CHECK(h.major == 6);
        CHECK(h.features.compat == attributes.compat_features);
        CHECK(h.features.incompat == attributes.incompat_features);
        CHECK(h.features.ro_compat == 0);
        CHECK(h.poolset_uuid == attributes.poolset_uuid);
        CHECK(h.prev_repl_uuid == attributes.prev_uuid);
        CHECK(h.next_repl_uuid == attributes.next_uuid);
        CHECK(h.arch_flags.encode() == attributes.user_flags);
        CHECK(h.prev_part_uuid == headers[(p + count - 1) % count].uuid);
        CHECK(h.next_part_uuid == headers[(p + 1) % count].uuid);
        CHECK(h.checksum_valid());
        auto bytes = h.encode();
        CHECK(poolset::fletcher64(bytes, 4088, 2048) == h.checksum);
        for (std::size_t q = 0; q < p; ++q)
            CHECK(headers[q].uuid != h.uuid);
    }
    CHECK(headers[0].uuid == attributes.uuid);
}

PoolAttributes pmemobj_attributes(bool single_header) {
    PoolAttributes a;
    const char signature[8] = {'P', 'M', 'E', 'M', 'O', 'B', 'J', '\0'};
    std::copy(std::begin(signature), std::end(signature), a.signature.begin());
    a.major = 6;
    a.compat_features = poolset::kFeatureCheckBadBlocks;
    a.incompat_features = poolset::kFeatureChecksum2K | poolset::kFeatureShutdownState |
                          (single_header ? poolset::kFeatureSingleHeader : 0);
    for (std::uint8_t i = 0; i < 16; ++i) {
        a.poolset_uuid[i] = static_cast<std::uint8_t>(0x10 + i);
        a.uuid[i] = static_cast<std::uint8_t>(0x20 + i);
        a.next_uuid[i] = static_cast<std::uint8_t>(0x30 + i);
        a.prev_uuid[i] = static_cast<std::uint8_t>(0x40 + i);
    }
    a.user_flags = poolset::ArchFlags::local().encode();
    return a;
}

PageBuffer pool_buffer(std::size_t size) {
    auto memory = PageBuffer::allocate(size);
    if (!memory)
        throw std::bad_alloc();
    return std::move(*memory);
}

} // namespace rpmem::test
