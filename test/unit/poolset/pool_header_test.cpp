// SPDX-License-Identifier: BSD-3-Clause
// The pool_hdr codec, PMDK's checksum rule, and the rpmemd header rules (create, open, set_attr).
#include <cerrno>
#include <cstring>
#include <random>

#include <catch2/catch.hpp>

#include "poolset/parser.h"
#include "poolset/pool_header.h"

using namespace rpmem::poolset;
using rpmem::PoolAttributes;

namespace {

PoolSet parsed(std::string_view text) {
    auto set = parse(text, "t.set");
    REQUIRE(set);
    return *set;
}

Uuid uuid_of(std::uint8_t seed) {
    Uuid uuid{};
    for (std::size_t i = 0; i < uuid.size(); ++i)
        uuid[i] = static_cast<std::uint8_t>(seed + i);
    return uuid;
}

// Hands out uuid_of(100), uuid_of(101), ... so tests know every generated UUID.
struct CountingUuids {
    std::uint8_t next = 100;
    Uuid operator()() { return uuid_of(next++); }
};

PoolAttributes obj_attributes() {
    PoolAttributes a;
    std::memcpy(a.signature.data(), "PMEMOBJ", 7);
    a.major = 6;
    a.compat_features = kFeatureCheckBadBlocks;
    a.incompat_features = kFeatureChecksum2K | kFeatureShutdownState;
    a.poolset_uuid = uuid_of(1);
    a.uuid = uuid_of(2);
    a.next_uuid = uuid_of(3);
    a.prev_uuid = uuid_of(4);
    a.user_flags = ArchFlags::local().encode();
    return a;
}

std::vector<PoolHeader> build(const PoolSet& set, const PoolAttributes& attributes) {
    std::vector<std::uint64_t> crtimes(set.replicas[0].parts.size(), 1700000000);
    auto headers = build_target_headers(set, attributes, crtimes, CountingUuids{});
    if (!headers)
        FAIL(headers.error().message());
    return *headers;
}

std::string error_of(const rpmem::Result<PoolAttributes>& result) {
    REQUIRE_FALSE(result);
    CHECK(result.error().errno_value() == EINVAL);
    return result.error().message();
}

} // namespace

TEST_CASE("decode and encode are exact inverses on any bytes", "[pool_header]") {
    std::mt19937 random(42);
    for (int round = 0; round < 20; ++round) {
        PoolHeader::Bytes bytes;
        for (auto& b : bytes)
            b = static_cast<std::uint8_t>(random());
        PoolHeader header = PoolHeader::decode(bytes);
        CHECK(header.encode() == bytes);
        CHECK(PoolHeader::decode(header.encode()) == header);
    }
}

TEST_CASE("fields sit at PMDK's offsets, little-endian", "[pool_header]") {
    PoolHeader h;
    std::memcpy(h.signature.data(), "PMEMOBJ", 7);
    h.major = 0x01020304;
    h.features = {0x11, 0x22, 0x33};
    h.poolset_uuid = uuid_of(0x40);
    h.uuid = uuid_of(0x50);
    h.prev_part_uuid = uuid_of(0x60);
    h.next_part_uuid = uuid_of(0x70);
    h.prev_repl_uuid = uuid_of(0x80);
    h.next_repl_uuid = uuid_of(0x90);
    h.crtime = 0x0102030405060708;
    h.arch_flags = ArchFlags{0x1122334455667788, 2, 1, {0, 0, 0, 0}, 62};
    h.sds.usc = 7;
    h.sds.dirty = 1;
    h.checksum = 0xa1a2a3a4a5a6a7a8;
    auto b = h.encode();
    CHECK(std::memcmp(b.data(), "PMEMOBJ\0", 8) == 0);
    CHECK(b[8] == 0x04);
    CHECK(b[11] == 0x01);
    CHECK(b[12] == 0x11);
    CHECK(b[16] == 0x22);
    CHECK(b[20] == 0x33);
    CHECK(b[24] == 0x40);
    CHECK(b[40] == 0x50);
    CHECK(b[56] == 0x60);
    CHECK(b[72] == 0x70);
    CHECK(b[88] == 0x80);
    CHECK(b[104] == 0x90);
    CHECK(b[120] == 0x08);
    CHECK(b[127] == 0x01);
    CHECK(b[128] == 0x88);
    CHECK(b[135] == 0x11);
    CHECK(b[136] == 2);
    CHECK(b[137] == 1);
    CHECK(b[142] == 62);
    CHECK(b[143] == 0);
    CHECK(b[4024] == 7);
    CHECK(b[4040] == 1);
    CHECK(b[4088] == 0xa8);
    CHECK(b[4095] == 0xa1);
}

TEST_CASE("fletcher64 follows util_checksum", "[pool_header]") {
    std::array<std::uint8_t, 16> bytes{1, 0, 0, 0, 2, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9};
    // words 1, 2, then the checksum field as two zero words: lo = 3, hi = 1 + 3 + 3 + 3.
    CHECK(fletcher64(bytes, 8, bytes.size()) == ((10ull << 32) | 3));
    // Skipping from offset 4 counts the 2 as zero too.
    CHECK(fletcher64(bytes, 8, 4) == ((4ull << 32) | 1));
}

TEST_CASE("the header checksum covers 2 KiB with CKSUM_2K, else all but itself", "[pool_header]") {
    PoolHeader h;
    h.major = 1;
    h.update_checksum();
    CHECK(h.checksum_valid());
    h.unused2[0] = 1; // offset 2048
    CHECK_FALSE(h.checksum_valid());
    h.features.incompat = kFeatureChecksum2K;
    h.update_checksum();
    h.unused2[5] = 9;
    h.sds.dirty = 1;
    CHECK(h.checksum_valid());
    h.unused[0] = 1; // offset 144
    CHECK_FALSE(h.checksum_valid());
}

TEST_CASE("arch flags of this machine", "[pool_header]") {
    ArchFlags flags = ArchFlags::local();
#if defined(__x86_64__)
    // As pmempool info shows for pools Debian's PMDK creates here.
    CHECK(flags.alignment_desc == 0x000007f737777310);
    CHECK(flags.machine == 62);
#endif
    CHECK(flags.machine_class == 2);
    CHECK(flags.data == 1);
    CHECK(ArchFlags::decode(flags.encode()) == flags);
}

TEST_CASE("random_uuid gives distinct version 4 UUIDs", "[pool_header]") {
    Uuid a = random_uuid();
    Uuid b = random_uuid();
    CHECK(a != b);
    CHECK((a[6] & 0xf0) == 0x40);
    CHECK((a[8] & 0xc0) == 0x80);
}

TEST_CASE("target headers: attributes, UUIDs and part ring as rpmemd wrote them", "[pool_header]") {
    PoolSet set = parsed("PMEMPOOLSET\n2M /a\n2M /b\n2M /c\n");
    PoolAttributes attributes = obj_attributes();
    std::vector<PoolHeader> headers = build(set, attributes);
    REQUIRE(headers.size() == 3);
    // Part 0 takes the attributes' UUID; the generator's first UUID (100) was for part 0 and
    // is replaced; parts 1 and 2 get 101 and 102.
    CHECK(headers[0].uuid == uuid_of(2));
    CHECK(headers[1].uuid == uuid_of(101));
    CHECK(headers[2].uuid == uuid_of(102));
    for (std::size_t p = 0; p < 3; ++p) {
        const PoolHeader& h = headers[p];
        INFO("part " << p);
        CHECK(std::memcmp(h.signature.data(), "PMEMOBJ", 8) == 0);
        CHECK(h.major == 6);
        CHECK(h.features == Features{1, kFeatureChecksum2K | kFeatureShutdownState, 0});
        CHECK(h.poolset_uuid == uuid_of(1));
        CHECK(h.prev_part_uuid == headers[(p + 2) % 3].uuid);
        CHECK(h.next_part_uuid == headers[(p + 1) % 3].uuid);
        CHECK(h.next_repl_uuid == uuid_of(3));
        CHECK(h.prev_repl_uuid == uuid_of(4));
        CHECK(h.crtime == 1700000000);
        CHECK(h.arch_flags == ArchFlags::local());
        CHECK(h.checksum_valid());
    }
    // Shutdown state only in part 0, initialised dirty with a valid checksum.
    CHECK(headers[0].sds.dirty == 1);
    CHECK(headers[0].sds.checksum == headers[0].sds.compute_checksum());
    CHECK(headers[1].sds == ShutdownState{});

    auto opened = check_target_headers(set, headers);
    REQUIRE(opened);
    CHECK(*opened == attributes);
}

TEST_CASE("target headers: zero fields fall back to generated and local values", "[pool_header]") {
    PoolSet set = parsed("PMEMPOOLSET\n2M /a\n2M /b\n");
    PoolAttributes attributes = obj_attributes();
    attributes.poolset_uuid = {};
    attributes.uuid = {};
    attributes.next_uuid = {};
    attributes.prev_uuid = {};
    attributes.user_flags = {};
    attributes.incompat_features = kFeatureChecksum2K;
    std::vector<PoolHeader> headers = build(set, attributes);
    REQUIRE(headers.size() == 2);
    CHECK(headers[0].poolset_uuid == uuid_of(100));
    CHECK(headers[0].uuid == uuid_of(101));
    CHECK(headers[1].uuid == uuid_of(102));
    // Replica links point at the replica itself (its part 0).
    CHECK(headers[1].next_repl_uuid == uuid_of(101));
    CHECK(headers[1].prev_repl_uuid == uuid_of(101));
    CHECK(headers[0].arch_flags == ArchFlags::local());
    CHECK(headers[0].sds == ShutdownState{}); // no SDS feature
}

TEST_CASE("target headers: SINGLEHDR and NOHDRS", "[pool_header]") {
    PoolSet single = parsed("PMEMPOOLSET\nOPTION SINGLEHDR\n2M /a\n2M /b\n");
    PoolAttributes attributes = obj_attributes();
    attributes.incompat_features |= kFeatureSingleHeader;
    std::vector<PoolHeader> headers = build(single, attributes);
    REQUIRE(headers.size() == 1);
    CHECK((headers[0].features.incompat & kFeatureSingleHeader) != 0);
    CHECK(headers[0].prev_part_uuid == headers[0].uuid);
    CHECK(headers[0].next_part_uuid == headers[0].uuid);
    CHECK(check_target_headers(single, headers));

    PoolSet none = parsed("PMEMPOOLSET\nOPTION NOHDRS\n2M /a\n");
    auto nothing = build_target_headers(none, PoolAttributes{}, std::vector<std::uint64_t>{1});
    REQUIRE(nothing);
    CHECK(nothing->empty());
    auto zero = check_target_headers(none, {});
    REQUIRE(zero);
    CHECK(zero->is_zero());
}

TEST_CASE("target headers: refused requests", "[pool_header]") {
    std::vector<std::uint64_t> one{1};
    auto message = [](const rpmem::Result<std::vector<PoolHeader>>& r) {
        REQUIRE_FALSE(r);
        CHECK(r.error().errno_value() == EINVAL);
        return r.error().message();
    };
    PoolSet plain = parsed("PMEMPOOLSET\n2M /a\n");
    CHECK_THAT(message(build_target_headers(plain, PoolAttributes{}, one)),
               Catch::Contains("zero attributes need OPTION NOHDRS"));
    PoolSet none = parsed("PMEMPOOLSET\nOPTION NOHDRS\n2M /a\n");
    CHECK_THAT(message(build_target_headers(none, obj_attributes(), one)),
               Catch::Contains("not supported for a set without headers"));
    PoolSet single = parsed("PMEMPOOLSET\nOPTION SINGLEHDR\n2M /a\n");
    CHECK_THAT(message(build_target_headers(single, obj_attributes(), one)),
               Catch::Contains("SINGLEHDR do not match"));
    PoolAttributes with_bit = obj_attributes();
    with_bit.incompat_features |= kFeatureSingleHeader;
    CHECK_THAT(message(build_target_headers(plain, with_bit, one)),
               Catch::Contains("SINGLEHDR do not match"));
    PoolSet replicas = parsed("PMEMPOOLSET\n2M /a\nREPLICA\n2M /b\n");
    CHECK_THAT(message(build_target_headers(replicas, obj_attributes(), one)),
               Catch::Contains("exactly one local replica"));
    CHECK_THAT(message(build_target_headers(plain, obj_attributes(), std::vector<std::uint64_t>{})),
               Catch::Contains("one creation time per part"));
}

TEST_CASE("check_target_headers finds each inconsistency", "[pool_header]") {
    PoolSet set = parsed("PMEMPOOLSET\n2M /a\n2M /b\n");
    const std::vector<PoolHeader> good = build(set, obj_attributes());
    struct Case {
        const char* expected;
        void (*spoil)(PoolHeader&);
        bool fix_checksum;
        std::size_t part = 1; // a zeroed part 1 would first break part 0's ring links
    };
    const Case cases[] = {
        {"all zero", [](PoolHeader& h) { h = PoolHeader{}; }, false, 0},
        {"signature differs", [](PoolHeader& h) { h.signature[0] = 'X'; }, true},
        {"major version differs", [](PoolHeader& h) { h.major = 5; }, true},
        {"compat feature flags differ", [](PoolHeader& h) { h.features.compat = 0; }, true},
        {"incompat feature flags differ", [](PoolHeader& h) { h.features.incompat ^= 4; }, true},
        {"ro_compat feature flags differ", [](PoolHeader& h) { h.features.ro_compat = 1; }, true},
        {"invalid checksum", [](PoolHeader& h) { h.crtime += 1; }, false},
        {"pool set UUID differs", [](PoolHeader& h) { h.poolset_uuid[0] ^= 1; }, true},
        {"previous replica UUID differs", [](PoolHeader& h) { h.prev_repl_uuid[0] ^= 1; }, true},
        {"next replica UUID differs", [](PoolHeader& h) { h.next_repl_uuid[0] ^= 1; }, true},
        {"architecture flags differ", [](PoolHeader& h) { h.arch_flags.machine = 183; }, true},
        {"part UUID links do not form the ring", [](PoolHeader& h) { h.prev_part_uuid[0] ^= 1; },
         true},
    };
    for (const Case& c : cases) {
        INFO(c.expected);
        std::vector<PoolHeader> headers = good;
        c.spoil(headers[c.part]);
        if (c.fix_checksum)
            headers[c.part].update_checksum();
        std::string message = error_of(check_target_headers(set, headers));
        CHECK_THAT(message, Catch::Contains("part " + std::to_string(c.part) + ": " +
                                            std::string(c.expected)));
    }
    CHECK_THAT(error_of(check_target_headers(set, std::span(good).first(1))),
               Catch::Contains("expected 2 pool headers, got 1"));
}

TEST_CASE("apply_attributes rewrites every header like rpmemd's set_attr", "[pool_header]") {
    PoolSet set = parsed("PMEMPOOLSET\n2M /a\n2M /b\n2M /c\n");
    std::vector<PoolHeader> headers = build(set, obj_attributes());
    PoolAttributes changed = obj_attributes();
    changed.uuid = uuid_of(0x20);
    changed.poolset_uuid = uuid_of(0x21);
    changed.next_uuid = uuid_of(0x22);
    changed.prev_uuid = uuid_of(0x23);
    changed.major = 7;
    REQUIRE(apply_attributes(set, headers, changed));
    CHECK(headers[0].uuid == uuid_of(0x20));
    CHECK(headers[2].next_part_uuid == uuid_of(0x20)); // ring neighbours follow part 0
    CHECK(headers[1].prev_part_uuid == uuid_of(0x20));
    CHECK(headers[1].uuid == uuid_of(101)); // other parts keep their UUIDs
    auto opened = check_target_headers(set, headers);
    REQUIRE(opened);
    CHECK(*opened == changed);

    PoolSet none = parsed("PMEMPOOLSET\nOPTION NOHDRS\n2M /a\n");
    auto refused = apply_attributes(none, {}, changed);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message(), Catch::Contains("without headers"));
    auto zero = apply_attributes(set, headers, PoolAttributes{});
    REQUIRE_FALSE(zero);
    CHECK_THAT(zero.error().message(), Catch::Contains("zero pool attributes"));
}

TEST_CASE("set_shutdown_dirty keeps the SDS checksum valid", "[pool_header]") {
    PoolSet set = parsed("PMEMPOOLSET\n2M /a\n");
    std::vector<PoolHeader> headers = build(set, obj_attributes());
    set_shutdown_dirty(headers[0], false);
    CHECK(headers[0].sds.dirty == 0);
    CHECK(headers[0].sds.checksum == headers[0].sds.compute_checksum());
    CHECK(headers[0].checksum_valid()); // CKSUM_2K: SDS is outside the header checksum
}
