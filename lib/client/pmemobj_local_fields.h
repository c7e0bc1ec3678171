// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "client/extent_digest.h"

namespace rpmem::client {

// The bytes of a libpmemobj pool that libpmemobj writes only into its local mapping and never
// hands to librpmem, so a healthy replica differs there from the local pool by design. Known
// for libpmemobj's on-media format 6 (PMDK 1.7 to 2.x), as PMDK 1.12.1 (Debian 12's) writes it:
//  - descriptor_runtime: the run-time part of the pool descriptor (struct pmemobjpool from
//    `addr` to the end of its 8 KiB, pointers and sizes filled in at every open; libpmemobj
//    zeroes and rebuilds it at open, never reads it from the file);
//  - chunk_footer: a chunk header slot inside a huge block that holds a footer
//    (CHUNK_TYPE_FOOTER; memblock.c writes footers "transient", heap boot recreates them);
//  - free_block_entry: the copy of a `struct memory_block` (48 bytes) that the heap's
//    free-block tree (container_ravl.c) keeps in the first bytes of a huge block's data;
//  - undo_extension_gen_num: the generation number of a lane's first undo log extension
//    (a ulog in the heap, after a transaction outgrew the lane's 2 KiB undo log), which
//    ulog.c moves on without persisting it.
// None of them is needed by a promoted replica: libpmemobj rebuilds the first three when it
// opens a pool and frees undo log extensions then (lane.c, ULOG_FREE_AFTER_FIRST).
//
// Every range is derived from the pool's own bytes (its header, descriptor, heap and zone
// headers and chunk headers), each validated before it is trusted, and each byte is excluded
// only where the local pool shows the local-only value there (a footer, a memory_block naming
// that very chunk), so a real difference in persistent state is never hidden. A pool that is
// not libpmemobj's, or not a format this knows, has no local-only fields.
//
// A value over a view of the pool: the caller keeps `pool` mapped and unchanged while using it.
// Pure, no I/O; thread-compatible.
class PmemobjLocalFields {
public:
    enum class Kind { descriptor_runtime, chunk_footer, free_block_entry, undo_extension_gen_num };

    struct Field {
        Range range;
        Kind kind = Kind::descriptor_runtime;

        friend bool operator==(const Field&, const Field&) = default;
    };

    // `pool`: the local pool from its first byte (its pool header included), as mapped.
    static PmemobjLocalFields of(std::span<const std::byte> pool);

    // The pool has a libpmemobj header (signature PMEMOBJ) of format 6.
    bool is_pmemobj() const noexcept { return is_pmemobj_; }
    // The local-only fields that overlap `range`, sorted by offset and disjoint; whole
    // fields, which may reach past `range`. Walks the chunk headers of the zones `range`
    // touches (at most 512 KiB each).
    std::vector<Field> within(Range range) const;

    // "run-time part of the pool descriptor", for messages and documentation.
    static std::string_view describe(Kind kind) noexcept;

private:
    explicit PmemobjLocalFields(std::span<const std::byte> pool)
        : pool_(pool) {}

    void add_heap_fields(Range range, std::vector<Field>& fields) const;
    void add_undo_extension_fields(Range range, std::vector<Field>& fields) const;

    std::span<const std::byte> pool_;
    bool is_pmemobj_ = false;
    std::size_t heap_offset_ = 0; // 0: no heap proven (only the descriptor's fields apply)
    std::size_t heap_end_ = 0;
};

// What confirm_differences needs of the replica being compared.
struct ReplicaBytes {
    // Required: the replica's bytes [offset, offset + into.size()) (client::Replica::read on
    // lane 0, rpmem_read, or a lane of a replica being brought up to date).
    std::function<Result<void>(std::span<std::byte> into, std::size_t offset)> read;
    // Optional: the replica's digests as Replica::digests gives them. With it, only the 4 KiB
    // pages whose digests differ are read; without it, each extent concerned is read whole.
    std::function<Result<std::vector<std::uint64_t>>(std::size_t offset, std::size_t length,
                                                     std::size_t extent_size)>
        digests;
};

// The outcome of confirm_differences.
struct ConfirmedDifferences {
    // What really differs, sorted and merged: each mismatching extent without local-only
    // fields whole, and, within an extent with such fields, the 4 KiB pages whose other bytes
    // differ.
    std::vector<Range> ranges;
    // The local-only fields whose bytes differ (left out of the comparison), in offset order.
    std::vector<PmemobjLocalFields::Field> local_only;
    std::uint64_t local_only_bytes = 0; // differing bytes inside `local_only`
    std::uint64_t bytes_read = 0;       // read from the replica to decide
};

// The one rule for rpmemctl verify, verify --repair and consistency on open: the digest
// mismatches (`mismatches`, from differing_ranges over extents of `extent_size`) of the local
// pool `pool` (from its first byte) against a replica, less what the pool's format keeps only
// in the local mapping (`local_fields`, PmemobjLocalFields::of(pool)). Each mismatching extent
// that holds a local-only field is compared again byte by byte with the replica's bytes, the
// fields left out, so a real difference in such an extent still shows, narrowed to its pages.
// Extents without such fields, and every extent of a pool that is not libpmemobj's, are
// returned as they are and nothing is read. An error of the replica is returned as it is.
Result<ConfirmedDifferences> confirm_differences(std::span<const std::byte> pool,
                                                 const PmemobjLocalFields& local_fields,
                                                 std::span<const Range> mismatches,
                                                 std::size_t extent_size,
                                                 const ReplicaBytes& replica);

} // namespace rpmem::client
