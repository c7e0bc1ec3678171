// SPDX-License-Identifier: BSD-3-Clause
#include <cstdint>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "persist/word_copy.h"

using rpmem::persist::copy_aligned_words;

TEST_CASE("copies exactly the range, for every alignment of source, destination and length") {
    std::vector<unsigned char> source(256);
    for (std::size_t i = 0; i < source.size(); ++i)
        source[i] = static_cast<unsigned char>(i * 7 + 1);

    for (std::size_t destination_offset = 0; destination_offset < 8; ++destination_offset) {
        for (std::size_t source_offset = 0; source_offset < 8; ++source_offset) {
            for (std::size_t length : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200}) {
                alignas(8) unsigned char destination[256 + 16];
                std::memset(destination, 0xee, sizeof destination);
                copy_aligned_words(destination + destination_offset, source.data() + source_offset,
                                   length);
                INFO("destination offset " << destination_offset << ", source offset "
                                           << source_offset << ", length " << length);
                REQUIRE(std::memcmp(destination + destination_offset, source.data() + source_offset,
                                    length) == 0);
                for (std::size_t i = 0; i < destination_offset; ++i)
                    REQUIRE(destination[i] == 0xee);
                for (std::size_t i = destination_offset + length; i < sizeof destination; ++i)
                    REQUIRE(destination[i] == 0xee);
            }
        }
    }
}
