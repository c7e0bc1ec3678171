// SPDX-License-Identifier: BSD-3-Clause
// The initiator's digests of its own pool (client::local_digests, on protocol::extent_digests,
// the target's definition too) and the ranges two digest vectors disagree on.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "client/extent_digest.h"
#include "protocol/extent_digest.h"

using rpmem::client::differing_ranges;
using rpmem::client::local_digests;
using rpmem::client::Range;

namespace {

constexpr std::size_t kExtent = 4096;

std::vector<std::byte> pattern(std::size_t size) {
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<std::byte>((i * 131 + i / 4096) & 0xff);
    return bytes;
}

} // namespace

TEST_CASE("a digest is XXH3-64 with seed 0") {
    // XXH3-64's published values for "" and "abc".
    CHECK(rpmem::protocol::extent_digest({}) == 0x2d06800538d394c2ULL);
    const std::byte abc[] = {std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
    CHECK(rpmem::protocol::extent_digest(abc) == 0x78af5f94892f3950ULL);
}

TEST_CASE("local digests: one per extent, the last one short") {
    auto pool = pattern(5 * kExtent);
    auto digests = local_digests(pool, kExtent, 3 * kExtent + 100, kExtent);
    REQUIRE(digests);
    REQUIRE(digests->size() == 4);
    const std::span<const std::byte> bytes(pool);
    CHECK((*digests)[0] == rpmem::protocol::extent_digest(bytes.subspan(kExtent, kExtent)));
    CHECK((*digests)[2] == rpmem::protocol::extent_digest(bytes.subspan(3 * kExtent, kExtent)));
    CHECK((*digests)[3] == rpmem::protocol::extent_digest(bytes.subspan(4 * kExtent, 100)));
    CHECK((*digests)[0] != (*digests)[1]);

    // One byte changes exactly one digest.
    pool[2 * kExtent + 17] ^= std::byte{1};
    auto changed = local_digests(pool, kExtent, 3 * kExtent + 100, kExtent);
    REQUIRE(changed);
    CHECK((*changed)[0] == (*digests)[0]);
    CHECK((*changed)[1] != (*digests)[1]);
    CHECK((*changed)[2] == (*digests)[2]);
    CHECK((*changed)[3] == (*digests)[3]);

    auto empty = local_digests(pool, 0, 0, kExtent);
    REQUIRE(empty);
    CHECK(empty->empty());
}

TEST_CASE("local digests refuse bad extent sizes and ranges outside the pool") {
    auto pool = pattern(4 * kExtent);
    for (std::size_t bad :
         {std::size_t{0}, std::size_t{2048}, std::size_t{3 * 4096}, std::size_t{128} << 20}) {
        auto refused = local_digests(pool, 0, kExtent, bad);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().errno_value() == EINVAL);
        CHECK_THAT(refused.error().message(), Catch::StartsWith("extent_size: "));
    }
    auto outside = local_digests(pool, 3 * kExtent, 2 * kExtent, kExtent);
    REQUIRE_FALSE(outside);
    CHECK_THAT(outside.error().message(), Catch::Contains("outside the pool of 16384 bytes"));
    CHECK_FALSE(local_digests(pool, 5 * kExtent, 0, kExtent));
}

TEST_CASE("differing ranges: neighbouring extents merge, the range's end is kept") {
    const Range range{4096, 6 * kExtent - 10}; // 6 extents, the last one 10 bytes short
    const std::vector<std::uint64_t> local{1, 2, 3, 4, 5, 6};

    CHECK(differing_ranges(local, local, range, kExtent).empty());

    std::vector<std::uint64_t> remote{1, 0, 0, 4, 5, 0};
    CHECK(differing_ranges(local, remote, range, kExtent) ==
          std::vector<Range>{{4096 + kExtent, 2 * kExtent}, {4096 + 5 * kExtent, kExtent - 10}});

    remote = {0, 2, 0, 4, 0, 6};
    CHECK(differing_ranges(local, remote, range, kExtent) ==
          std::vector<Range>{
              {4096, kExtent}, {4096 + 2 * kExtent, kExtent}, {4096 + 4 * kExtent, kExtent}});

    remote = {0, 0, 0, 0, 0, 0};
    CHECK(differing_ranges(local, remote, range, kExtent) == std::vector<Range>{range});
}

TEST_CASE("differing ranges: a digest one side lacks counts as different") {
    const Range range{0, 4 * kExtent};
    const std::vector<std::uint64_t> local{1, 2, 3, 4};
    const std::vector<std::uint64_t> shorter{1, 2};
    CHECK(differing_ranges(local, shorter, range, kExtent) ==
          std::vector<Range>{{2 * kExtent, 2 * kExtent}});
    CHECK(differing_ranges(shorter, local, range, kExtent) ==
          std::vector<Range>{{2 * kExtent, 2 * kExtent}});
    CHECK(differing_ranges({}, {}, Range{0, 0}, kExtent).empty());
}
