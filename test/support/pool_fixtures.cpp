// SPDX-License-Identifier: BSD-3-Clause
#include "pool_fixtures.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <new>

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
