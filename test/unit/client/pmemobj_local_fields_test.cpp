// SPDX-License-Identifier: BSD-3-Clause
// The local-only fields of a real libpmemobj pool (client::PmemobjLocalFields), made here with
// Debian's libpmemobj (pmemobj_create, transactions, pmemobj_close), and confirm_differences
// against a "replica" that holds what libpmemobj handed to librpmem: the pool without those
// fields. Left out, they make no difference; a byte flipped anywhere else still does.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <libpmemobj.h>

#include "client/extent_digest.h"
#include "client/pmemobj_local_fields.h"
#include "temp_dir.h"

using rpmem::Result;
using rpmem::client::confirm_differences;
using rpmem::client::differing_ranges;
using rpmem::client::local_digests;
using rpmem::client::PmemobjLocalFields;
using rpmem::client::Range;
using rpmem::client::ReplicaBytes;
using Kind = PmemobjLocalFields::Kind;

namespace {

constexpr std::size_t kPoolSize = 16 << 20;
constexpr std::size_t kExtent = 1 << 20;
constexpr std::size_t kHeader = 4096;

struct Root {
    std::uint64_t count;
    std::uint64_t slots[4096];
};

// One small transaction, as pmemobj-tx runs them (its own function: TX_BEGIN is a setjmp).
void transaction(PMEMobjpool* pool, Root* root, std::uint64_t i) {
    std::uint64_t* slot = &root->slots[i * 37 % 4096];
    TX_BEGIN(pool) {
        pmemobj_tx_add_range_direct(slot, sizeof *slot);
        *slot = i + 1;
        pmemobj_tx_add_range_direct(&root->count, sizeof root->count);
        root->count = i + 1;
    }
    TX_END
}

// A transaction that snapshots 64 KiB, more than a lane's 2 KiB undo log: libpmemobj extends
// the undo log with a ulog from the heap.
void big_transaction(PMEMobjpool* pool, Root* root,
                     int fill){TX_BEGIN(pool){pmemobj_tx_add_range_direct(root, sizeof *root);
std::memset(root, fill, sizeof *root);
} // namespace
TX_END
}

// A pool as an unmodified libpmemobj program leaves it: created, a root object, 100 small
// transactions, closed cleanly. Its bytes, as the local mapping held them.
std::vector<std::byte> make_pool(const rpmem::test::TempDir& dir, bool big = false) {
    const std::string path = (dir / "pool.obj").string();
    PMEMobjpool* pool = pmemobj_create(path.c_str(), "local-fields", kPoolSize, 0600);
    REQUIRE(pool != nullptr);
    PMEMoid root_oid = pmemobj_root(pool, sizeof(Root));
    auto* root = static_cast<Root*>(pmemobj_direct(root_oid));
    REQUIRE(root != nullptr);
    for (std::uint64_t i = 0; i < 100; ++i)
        transaction(pool, root, i);
    for (int i = 0; big && i < 5; ++i)
        big_transaction(pool, root, i);
    pmemobj_close(pool);
    const std::string text = dir.read("pool.obj");
    std::vector<std::byte> bytes(text.size());
    std::memcpy(bytes.data(), text.data(), text.size());
    return bytes;
}

std::vector<PmemobjLocalFields::Field> all_fields(const PmemobjLocalFields& fields,
                                                  std::size_t size) {
    return fields.within({kHeader, size - kHeader});
}

// What a replica holds after a clean close: every persisted byte, the local-only fields as
// they were before libpmemobj wrote them into its mapping (zero in a fresh pool).
std::vector<std::byte> replica_of(const std::vector<std::byte>& pool,
                                  const std::vector<PmemobjLocalFields::Field>& fields) {
    std::vector<std::byte> replica = pool;
    for (const auto& field : fields)
        std::fill_n(replica.begin() + static_cast<std::ptrdiff_t>(field.range.offset),
                    field.range.length, std::byte{0});
    return replica;
}

struct Comparison {
    std::vector<Range> mismatches;
    rpmem::client::ConfirmedDifferences confirmed;
};

Comparison compare(const std::vector<std::byte>& pool, const std::vector<std::byte>& replica,
                   bool with_digests) {
    const Range range{kHeader, pool.size() - kHeader};
    auto local = local_digests(pool, range.offset, range.length, kExtent);
    auto remote = local_digests(replica, range.offset, range.length, kExtent);
    REQUIRE(local);
    REQUIRE(remote);
    Comparison comparison;
    comparison.mismatches = differing_ranges(*local, *remote, range, kExtent);
    ReplicaBytes bytes;
    bytes.read = [&](std::span<std::byte> into, std::size_t offset) -> Result<void> {
        REQUIRE(offset + into.size() <= replica.size());
        std::memcpy(into.data(), replica.data() + offset, into.size());
        return {};
    };
    if (with_digests)
        bytes.digests = [&](std::size_t offset, std::size_t length, std::size_t extent) {
            return local_digests(replica, offset, length, extent);
        };
    auto confirmed = confirm_differences(pool, PmemobjLocalFields::of(pool), comparison.mismatches,
                                         kExtent, bytes);
    REQUIRE(confirmed);
    comparison.confirmed = std::move(*confirmed);
    return comparison;
}

std::uint64_t total_length(const std::vector<Range>& ranges) {
    std::uint64_t total = 0;
    for (const Range& range : ranges)
        total += range.length;
    return total;
}

std::uint64_t load64(const std::vector<std::byte>& pool, std::size_t offset) {
    std::uint64_t value = 0;
    std::memcpy(&value, pool.data() + offset, sizeof value);
    return value;
}

} // namespace

TEST_CASE("a libpmemobj pool's local-only fields: the descriptor's run-time part, footers and "
          "free-block entries, each where the pool's own bytes put it") {
    rpmem::test::TempDir dir("rpmem-local-fields");
    const std::vector<std::byte> pool = make_pool(dir);
    const PmemobjLocalFields fields = PmemobjLocalFields::of(pool);
    REQUIRE(fields.is_pmemobj());
    const auto found = all_fields(fields, pool.size());
    INFO("fields: " << found.size());
    REQUIRE(found.size() >= 3);

    // struct pmemobjpool from `addr` to its end (8 KiB from the pool's start).
    CHECK(found.front() ==
          PmemobjLocalFields::Field{{6688, 8192 - 6688}, Kind::descriptor_runtime});

    const std::uint64_t heap_offset = load64(pool, 4096 + 1024 + 16);
    const std::uint64_t headers = heap_offset + 1024 + 64;
    const std::uint64_t chunks = headers + 8 * 65528;
    std::size_t footers = 0;
    std::size_t entries = 0;
    for (const auto& field : found) {
        if (field.kind == Kind::chunk_footer) {
            ++footers;
            CHECK(field.range.length == 8);
            CHECK((field.range.offset - headers) % 8 == 0);
            std::uint16_t type = 0;
            std::memcpy(&type, pool.data() + field.range.offset, sizeof type);
            CHECK(type == 1); // CHUNK_TYPE_FOOTER
        } else if (field.kind == Kind::free_block_entry) {
            ++entries;
            CHECK(field.range.length == 48);
            // It names the chunk it sits in, in zone 0.
            const std::uint64_t chunk = (field.range.offset - chunks) / (256 * 1024);
            std::uint32_t named = 0;
            std::memcpy(&named, pool.data() + field.range.offset, sizeof named);
            CHECK(named == chunk);
            std::uint32_t header = 0; // the chunk's header: free (or used)
            std::memcpy(&header, pool.data() + headers + 8 * chunk, sizeof header);
            CHECK(((header & 0xffff) == 2 || (header & 0xffff) == 3));
        }
    }
    CHECK(footers >= 1);
    CHECK(entries >= 1);
    CHECK(std::is_sorted(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return a.range.offset + a.range.length <= b.range.offset;
    }));

    // within() answers for the range asked only.
    CHECK(fields.within({kHeader, 2048}).empty());
    CHECK(fields.within({8192, 4096}).empty());
    CHECK(fields.within({7000, 1}).size() == 1);
}

TEST_CASE("what is not libpmemobj's format 6, or a heap that does not check out, has no "
          "heap fields") {
    rpmem::test::TempDir dir("rpmem-local-fields");
    const std::vector<std::byte> pool = make_pool(dir);

    std::vector<std::byte> other = pool;
    other[0] = std::byte{'X'}; // not PMEMOBJ
    CHECK_FALSE(PmemobjLocalFields::of(other).is_pmemobj());
    CHECK(all_fields(PmemobjLocalFields::of(other), other.size()).empty());

    other = pool;
    other[8] = std::byte{5}; // format 5
    CHECK_FALSE(PmemobjLocalFields::of(other).is_pmemobj());

    CHECK_FALSE(PmemobjLocalFields::of(std::span<const std::byte>(pool).first(8000)).is_pmemobj());

    // A heap whose signature is gone: only the descriptor's run-time part is known.
    other = pool;
    const std::uint64_t heap_offset = load64(pool, 4096 + 1024 + 16);
    other[heap_offset] = std::byte{'X'};
    auto descriptor_only = all_fields(PmemobjLocalFields::of(other), other.size());
    REQUIRE(descriptor_only.size() == 1);
    CHECK(descriptor_only[0].kind == Kind::descriptor_runtime);

    // A heap_offset pointing outside the pool is not followed.
    other = pool;
    const std::uint64_t outside = other.size() + 4096;
    std::memcpy(other.data() + 4096 + 1024 + 16, &outside, sizeof outside);
    CHECK(all_fields(PmemobjLocalFields::of(other), other.size()).size() == 1);
}

TEST_CASE("confirm_differences: a healthy replica is identical; a flipped byte in the data or "
          "in the descriptor's persistent part still shows") {
    rpmem::test::TempDir dir("rpmem-local-fields");
    const std::vector<std::byte> pool = make_pool(dir);
    const auto fields = all_fields(PmemobjLocalFields::of(pool), pool.size());
    const std::vector<std::byte> healthy = replica_of(pool, fields);

    for (bool with_digests : {false, true}) {
        INFO("finer digests: " << with_digests);
        auto same = compare(pool, healthy, with_digests);
        CHECK_FALSE(same.mismatches.empty()); // the digests alone see the local-only fields
        CHECK(same.confirmed.ranges.empty());
        CHECK(same.confirmed.local_only.size() == fields.size());
        CHECK(same.confirmed.local_only_bytes > 0);
        if (with_digests)
            CHECK(same.confirmed.bytes_read == 4096 * same.confirmed.local_only.size());
        else
            CHECK(same.confirmed.bytes_read == total_length(same.mismatches));

        // One byte of the persistent descriptor (its layout name): the page that holds it.
        std::vector<std::byte> descriptor = healthy;
        descriptor[4096 + 3] ^= std::byte{0x5a};
        auto found = compare(pool, descriptor, with_digests);
        CHECK(found.confirmed.ranges == std::vector<Range>{{4096, 4096}});

        // One byte of the root object, in an extent without local-only fields: that extent.
        const std::size_t data_at = 5 * kExtent + 4096 + 777;
        REQUIRE(PmemobjLocalFields::of(pool).within({5 * kExtent + 4096, kExtent}).empty());
        std::vector<std::byte> data = healthy;
        data[data_at] ^= std::byte{0x01};
        auto in_data = compare(pool, data, with_digests);
        CHECK(in_data.confirmed.ranges == std::vector<Range>{{5 * kExtent + 4096, kExtent}});

        // A byte next to a footer, in the same page: the page, not the field.
        const auto footer = std::find_if(fields.begin(), fields.end(), [](const auto& field) {
            return field.kind == Kind::chunk_footer;
        });
        REQUIRE(footer != fields.end());
        std::vector<std::byte> beside = healthy;
        beside[footer->range.offset + 8] ^= std::byte{0x01};
        auto near_footer = compare(pool, beside, with_digests);
        const std::size_t page = footer->range.offset / 4096 * 4096;
        CHECK(near_footer.confirmed.ranges == std::vector<Range>{{page, 4096}});
    }
}

TEST_CASE("confirm_differences passes a replica's read error on and leaves other pools alone") {
    rpmem::test::TempDir dir("rpmem-local-fields");
    const std::vector<std::byte> pool = make_pool(dir);
    const std::vector<Range> mismatches{{4096, kExtent}, {4096 + 3 * kExtent, kExtent}};
    ReplicaBytes failing;
    failing.read = [](std::span<std::byte>, std::size_t offset) -> Result<void> {
        return rpmem::fail(EIO, "reading offset " + std::to_string(offset));
    };
    auto failed =
        confirm_differences(pool, PmemobjLocalFields::of(pool), mismatches, kExtent, failing);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().errno_value() == EIO);

    // Not a libpmemobj pool: the mismatches stand as they are and nothing is read.
    std::vector<std::byte> other = pool;
    other[0] = std::byte{0};
    auto plain =
        confirm_differences(other, PmemobjLocalFields::of(other), mismatches, kExtent, failing);
    REQUIRE(plain);
    CHECK(plain->ranges == mismatches);
    CHECK(plain->bytes_read == 0);
}

TEST_CASE("a transaction larger than a lane's undo log leaves its extension's generation number "
          "local-only, and it makes no difference") {
    rpmem::test::TempDir dir("rpmem-local-fields");
    const std::vector<std::byte> pool = make_pool(dir, true);
    const auto fields = all_fields(PmemobjLocalFields::of(pool), pool.size());
    const auto gen_num = std::find_if(fields.begin(), fields.end(), [](const auto& field) {
        return field.kind == Kind::undo_extension_gen_num;
    });
    REQUIRE(gen_num != fields.end());
    CHECK(gen_num->range.length == 8);
    // It equals lane 0's undo log's own generation number (5 big and 100 small transactions on).
    const std::uint64_t lane0_undo = 8192 + 256 + 704;
    CHECK(load64(pool, gen_num->range.offset) == load64(pool, lane0_undo + 24));
    CHECK(load64(pool, gen_num->range.offset) >= 105);

    auto same = compare(pool, replica_of(pool, fields), true);
    CHECK(same.confirmed.ranges.empty());
    CHECK(std::find(same.confirmed.local_only.begin(), same.confirmed.local_only.end(), *gen_num) !=
          same.confirmed.local_only.end());
    // Its neighbour, the extension's capacity, is persisted: a change there shows.
    std::vector<std::byte> capacity = replica_of(pool, fields);
    capacity[gen_num->range.offset - 8] ^= std::byte{0x01};
    auto found = compare(pool, capacity, true);
    CHECK(found.confirmed.ranges ==
          std::vector<Range>{{gen_num->range.offset / 4096 * 4096, 4096}});
}
