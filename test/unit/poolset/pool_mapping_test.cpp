// SPDX-License-Identifier: BSD-3-Clause
// Creating, locking, mapping and removing real part files in temporary directories.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <libpmem.h>
#include <sys/stat.h>
#include <unistd.h>

#include "poolset/parser.h"
#include "poolset/pool_mapping.h"
#include "temp_dir.h"

using namespace rpmem::poolset;
using rpmem::test::TempDir;

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMiB = 1 << 20;

// Parses `text` with "@" standing for `dir`.
PoolSet set_in(const TempDir& dir, std::string_view text) {
    auto parsed = parse(dir.expand(text), "test.set");
    REQUIRE(parsed);
    return *parsed;
}

std::vector<std::uint8_t> read_at(const fs::path& file, std::uint64_t offset, std::size_t size) {
    std::vector<std::uint8_t> bytes(size);
    std::ifstream in(file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    REQUIRE(in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)));
    return bytes;
}

void write_file(const fs::path& file, std::uint64_t size, std::uint8_t first_byte) {
    std::ofstream out(file, std::ios::binary);
    std::vector<char> zeros(size, 0);
    zeros[0] = static_cast<char>(first_byte);
    out.write(zeros.data(), static_cast<std::streamsize>(size));
}

int error_of(const rpmem::Result<PoolMapping>& result) {
    REQUIRE_FALSE(result);
    return result.error().errno_value();
}

} // namespace

TEST_CASE("create maps every part after part 0 without its header page", "[pool_mapping]") {
    TempDir dir;
    PoolSet set = set_in(dir, "PMEMPOOLSET\n2M @/a\n3M @/b\n");
    auto mapping = PoolMapping::create(set);
    REQUIRE(mapping);
    CHECK(mapping->size() == 5 * kMiB - 4096);
    CHECK(mapping->size() == set.pool_size());
    CHECK(mapping->created_parts() == std::vector<bool>{true, true});
    REQUIRE(mapping->creation_times().size() == 2);
    CHECK(mapping->creation_times()[0] > 0);
    CHECK(mapping->is_pmem() == (pmem_is_pmem(mapping->data(), mapping->size()) != 0));

    for (const char* name : {"a", "b"}) {
        struct stat st {};
        REQUIRE(stat((dir / name).c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0600);
    }
    CHECK(fs::file_size(dir / "a") == 2 * kMiB);
    CHECK(fs::file_size(dir / "b") == 3 * kMiB);

    // Pool offset 2 MiB is part b's first byte after its header page.
    std::memcpy(mapping->data() + 2 * kMiB, "part-b", 6);
    std::memcpy(mapping->data() + 10, "part-a", 6);
    std::memcpy(mapping->data() + mapping->size() - 4, "end!", 4);
    REQUIRE(mapping->persist(0, mapping->size()));
    REQUIRE(mapping->deep_persist(2 * kMiB, 6));
    CHECK(read_at(dir / "b", 4096, 6) == std::vector<std::uint8_t>{'p', 'a', 'r', 't', '-', 'b'});
    CHECK(read_at(dir / "a", 10, 6) == std::vector<std::uint8_t>{'p', 'a', 'r', 't', '-', 'a'});
    CHECK(read_at(dir / "b", 3 * kMiB - 4, 4) == std::vector<std::uint8_t>{'e', 'n', 'd', '!'});
}

TEST_CASE("with SINGLEHDR or NOHDRS every part is mapped whole", "[pool_mapping]") {
    for (const char* option : {"SINGLEHDR", "NOHDRS"}) {
        INFO(option);
        TempDir dir;
        PoolSet set =
            set_in(dir, std::string("PMEMPOOLSET\nOPTION ") + option + "\n2M @/a\n2M @/b\n");
        auto mapping = PoolMapping::create(set);
        REQUIRE(mapping);
        CHECK(mapping->size() == 4 * kMiB);
        std::memcpy(mapping->data() + 2 * kMiB, "B0", 2);
        REQUIRE(mapping->persist(2 * kMiB, 2));
        CHECK(read_at(dir / "b", 0, 2) == std::vector<std::uint8_t>{'B', '0'});
        CHECK(mapping->read_headers().size() == (std::string(option) == "NOHDRS" ? 0u : 1u));
    }
}

TEST_CASE("headers written through the mapping are read back after reopening", "[pool_mapping]") {
    TempDir dir;
    PoolSet set = set_in(dir, "PMEMPOOLSET\n2M @/a\n2M @/b\n2M @/c\n");
    rpmem::PoolAttributes attributes;
    std::memcpy(attributes.signature.data(), "PMEMOBJ", 7);
    attributes.major = 6;
    attributes.incompat_features = kFeatureChecksum2K;
    attributes.uuid = random_uuid();
    attributes.poolset_uuid = random_uuid();
    {
        auto mapping = PoolMapping::create(set);
        REQUIRE(mapping);
        REQUIRE(mapping->read_headers().size() == 3);
        auto headers = build_target_headers(mapping->set(), attributes, mapping->creation_times());
        REQUIRE(headers);
        REQUIRE(mapping->write_headers(*headers));
        CHECK_FALSE(mapping->write_headers(std::span(*headers).first(2)));
    }
    auto reopened = PoolMapping::open(set);
    REQUIRE(reopened);
    CHECK(reopened->created_parts() == std::vector<bool>{false, false, false});
    std::vector<PoolHeader> headers = reopened->read_headers();
    auto opened = check_target_headers(reopened->set(), headers);
    REQUIRE(opened);
    CHECK(opened->uuid == attributes.uuid);
    CHECK(opened->poolset_uuid == attributes.poolset_uuid);
    // Part b's header is at its file offset 0, outside the contiguous range.
    auto raw = read_at(dir / "b", 0, kPoolHeaderSize);
    CHECK(PoolHeader::decode(std::span<const std::uint8_t, kPoolHeaderSize>(
              raw.data(), kPoolHeaderSize)) == headers[1]);
    // Part a's header is the pool's first page.
    CHECK(std::memcmp(reopened->data(), "PMEMOBJ", 7) == 0);
}

TEST_CASE("a part holding data is never overwritten; nothing created is left behind",
          "[pool_mapping]") {
    TempDir dir;
    write_file(dir / "b", 2 * kMiB, 0x5a);
    PoolSet set = set_in(dir, "PMEMPOOLSET\n2M @/a\n2M @/b\n");
    CHECK(error_of(PoolMapping::create(set)) == EEXIST);
    CHECK_FALSE(fs::exists(dir / "a"));
    CHECK(read_at(dir / "b", 0, 1) == std::vector<std::uint8_t>{0x5a});
}

TEST_CASE("an existing empty part of the right size is taken over", "[pool_mapping]") {
    TempDir dir;
    write_file(dir / "a", 2 * kMiB, 0);
    PoolSet set = set_in(dir, "PMEMPOOLSET\n2M @/a\n2M @/b\n");
    auto mapping = PoolMapping::create(set);
    REQUIRE(mapping);
    CHECK(mapping->created_parts() == std::vector<bool>{false, true});
}

TEST_CASE("size mismatches, missing parts and AUTO on a file are refused", "[pool_mapping]") {
    TempDir dir;
    write_file(dir / "a", 3 * kMiB, 0);
    CHECK(error_of(PoolMapping::create(set_in(dir, "PMEMPOOLSET\n2M @/a\n"))) == EINVAL);
    CHECK(error_of(PoolMapping::open(set_in(dir, "PMEMPOOLSET\n2M @/missing\n"))) == ENOENT);
    CHECK(error_of(PoolMapping::open(set_in(dir, "PMEMPOOLSET\nAUTO @/a\n"))) == EINVAL);
    CHECK(error_of(PoolMapping::create(set_in(dir, "PMEMPOOLSET\nAUTO @/new\n"))) == ENOENT);
    fs::create_directory(dir / "dir");
    // Directory sets (PMDK: a directory PATH) are not supported: opening it fails.
    CHECK(error_of(PoolMapping::open(set_in(dir, "PMEMPOOLSET\n2M @/dir\n"))) == EISDIR);
    CHECK(error_of(PoolMapping::create(set_in(dir, "PMEMPOOLSET\n2M @/a\nREPLICA h r.set\n"), 1)) ==
          EINVAL);
}

TEST_CASE("a mapped pool is locked against a second user", "[pool_mapping]") {
    TempDir dir;
    PoolSet set = set_in(dir, "PMEMPOOLSET\n2M @/a\n2M @/b\n");
    {
        auto first = PoolMapping::create(set);
        REQUIRE(first);
        auto second = PoolMapping::open(set);
        CHECK(error_of(second) == EBUSY);
        CHECK_THAT(second.error().message(), Catch::Contains("is locked"));
        CHECK(error_of(PoolMapping::create(set)) == EBUSY);
        auto busy = PoolMapping::remove(set, false);
        REQUIRE_FALSE(busy);
        CHECK(busy.error().errno_value() == EBUSY);
        // Moving the mapping keeps the lock.
        PoolMapping moved = std::move(*first);
        CHECK(error_of(PoolMapping::open(set)) == EBUSY);
    }
    // Destroying the mapping released the locks.
    CHECK(PoolMapping::open(set));
}

TEST_CASE("persist ranges are checked against the pool", "[pool_mapping]") {
    TempDir dir;
    auto mapping = PoolMapping::create(set_in(dir, "PMEMPOOLSET\n2M @/a\n"));
    REQUIRE(mapping);
    CHECK(mapping->persist(0, 0));
    CHECK(mapping->persist(mapping->size(), 0));
    CHECK(mapping->persist(mapping->size() - 1, 1));
    CHECK_FALSE(mapping->persist(mapping->size() - 1, 2));
    CHECK_FALSE(mapping->persist(mapping->size() + 1, 0));
    CHECK_FALSE(mapping->persist(1, UINT64_MAX));
    CHECK_FALSE(mapping->deep_persist(0, mapping->size() + 1));
}

TEST_CASE("remove unlinks every part, and force ignores missing ones", "[pool_mapping]") {
    TempDir dir;
    PoolSet set = set_in(dir, "PMEMPOOLSET\n2M @/a\n2M @/b\nREPLICA\n4M @/c\n");
    REQUIRE(PoolMapping::create(set, 0));
    REQUIRE(PoolMapping::create(set, 1));
    REQUIRE(PoolMapping::remove(set, false));
    CHECK_FALSE(fs::exists(dir / "a"));
    CHECK_FALSE(fs::exists(dir / "b"));
    CHECK_FALSE(fs::exists(dir / "c"));
    auto missing = PoolMapping::remove(set, false);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().errno_value() == ENOENT);
    CHECK(PoolMapping::remove(set, true));
    auto remote = PoolMapping::remove(set_in(dir, "PMEMPOOLSET\n2M @/a\nREPLICA h r.set\n"), true);
    REQUIRE_FALSE(remote);
    CHECK(remote.error().errno_value() == EINVAL);
}
