// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "poolset/pool_set.h"

namespace rpmem::poolset {

// PMDK's on-media `struct pool_hdr` (src/common/pool_hdr.h, 1.12): 4096 bytes, little-endian.
inline constexpr std::size_t kPoolHeaderSize = 4096;

// Feature bits of the header's three masks.
inline constexpr std::uint32_t kFeatureCheckBadBlocks = 0x1; // compat
inline constexpr std::uint32_t kFeatureSingleHeader = 0x1;   // incompat: OPTION SINGLEHDR
inline constexpr std::uint32_t kFeatureChecksum2K = 0x2;     // incompat: checksum first 2 KiB
inline constexpr std::uint32_t kFeatureShutdownState = 0x4;  // incompat: SDS in part 0

using Uuid = PoolAttributes::Uuid;

struct Features {
    std::uint32_t compat = 0;
    std::uint32_t incompat = 0;
    std::uint32_t ro_compat = 0;

    friend bool operator==(const Features&, const Features&) = default;
};

// The header's `arch_flags`: identifies the ABI that wrote the pool. 16 bytes on media:
// alignment_desc u64, machine_class u8, data u8, reserved[4], machine u16.
struct ArchFlags {
    std::uint64_t alignment_desc = 0;
    std::uint8_t machine_class = 0;
    std::uint8_t data = 0;
    std::array<std::uint8_t, 4> reserved{};
    std::uint16_t machine = 0;

    // The flags PMDK computes for code built like this file (util_get_arch_flags): the
    // alignment of char, short, int, long, long long, size_t, off_t, float, double, long
    // double and void*, minus one, in 4-bit fields; class 2 (64-bit); data 1 (little-endian);
    // machine 62 (x86-64) or 183 (AArch64).
    static ArchFlags local();

    std::array<std::uint8_t, 16> encode() const;
    static ArchFlags decode(std::span<const std::uint8_t, 16> bytes);

    friend bool operator==(const ArchFlags&, const ArchFlags&) = default;
};

// The shutdown state (SDS) kept in part 0's header when kFeatureShutdownState is set: unsafe
// shutdown count and device id sums, the dirty flag, and its own checksum.
struct ShutdownState {
    std::uint64_t usc = 0;
    std::uint64_t uuid = 0;
    std::uint8_t dirty = 0;
    std::array<std::uint8_t, 39> reserved{};
    std::uint64_t checksum = 0;

    // Fletcher-64 over its 64 bytes with the checksum field counted as zero.
    std::uint64_t compute_checksum() const;
    void update_checksum() { checksum = compute_checksum(); }

    friend bool operator==(const ShutdownState&, const ShutdownState&) = default;
};

// One part's pool header as a value, with an explicit little-endian codec: decode(encode(h))
// == h and encode(decode(b)) == b for every 4096-byte b (unused areas are kept, not zeroed).
struct PoolHeader {
    static constexpr std::size_t kUnusedSize = 1904;  // offset 144
    static constexpr std::size_t kUnused2Size = 1976; // offset 2048, never checksummed

    std::array<char, 8> signature{};
    std::uint32_t major = 0;
    Features features;
    Uuid poolset_uuid{};
    Uuid uuid{};
    Uuid prev_part_uuid{};
    Uuid next_part_uuid{};
    Uuid prev_repl_uuid{};
    Uuid next_repl_uuid{};
    std::uint64_t crtime = 0;
    ArchFlags arch_flags;
    std::array<std::uint8_t, kUnusedSize> unused{};
    std::array<std::uint8_t, kUnused2Size> unused2{};
    ShutdownState sds;
    std::uint64_t checksum = 0;

    using Bytes = std::array<std::uint8_t, kPoolHeaderSize>;
    Bytes encode() const;
    static PoolHeader decode(std::span<const std::uint8_t, kPoolHeaderSize> bytes);

    // PMDK's header checksum (util_checksum): over the little-endian 32-bit words of the
    // encoded header, lo += word, hi += lo, with the checksum field, and with CKSUM_2K every
    // word from offset 2048 on, counted as zero; the result is hi << 32 | lo.
    std::uint64_t compute_checksum() const;
    void update_checksum() { checksum = compute_checksum(); }
    bool checksum_valid() const { return checksum == compute_checksum(); }

    bool is_zero() const;

    // What the header says to a client as PMDK's rpmem_pool_attr (util_get_rpmem_attr).
    PoolAttributes attributes() const;

    friend bool operator==(const PoolHeader&, const PoolHeader&) = default;
};

// Fletcher-64 as PMDK's util_checksum computes it over `bytes` (a multiple of 4 long): the
// 8 bytes at `checksum_offset` and everything from `skip_from` on count as zero.
std::uint64_t fletcher64(std::span<const std::uint8_t> bytes, std::size_t checksum_offset,
                         std::size_t skip_from);

// A source of fresh random UUIDs (the seam for tests).
using UuidSource = std::function<Uuid()>;

// A random (version 4) UUID from the kernel's random source, as PMDK's util_uuid_generate.
Uuid random_uuid();

// Builds the headers of every header-carrying part of a target set from the pool attributes a
// client sent, exactly as PMDK's rpmemd did (util_pool_create_uuids + util_header_create):
// signature, major and features from `attributes` (plus the SINGLEHDR bit with that option);
// the pool set UUID from `attributes` (random if zero); part 0's UUID from `attributes` (random
// if zero) and random UUIDs for the other parts; part links in a ring over the parts (all to
// part 0 with SINGLEHDR); replica links from `attributes`, or links to part 0 itself where
// zero; `crtimes[p]` (the part file's ctime) as creation time; `attributes.user_flags` as arch
// flags, or this machine's when zero; with the SDS feature, part 0's shutdown state
// initialised (usc and device id sums 0, as for files off NVDIMMs) and marked dirty; then the
// checksum. Returns one header per part that has one: none for zero attributes with NOHDRS.
// Errors (EINVAL): zero attributes without NOHDRS or attributes with NOHDRS, the SINGLEHDR
// option not matching the attributes' SINGLEHDR bit, a set with replicas, AUTO parts' crtimes
// missing (crtimes.size() must equal the number of parts).
Result<std::vector<PoolHeader>> build_target_headers(const PoolSet& set,
                                                     const PoolAttributes& attributes,
                                                     std::span<const std::uint64_t> crtimes,
                                                     const UuidSource& uuids = random_uuid);

// Marks the shutdown state clean or dirty (rpmemd clears it on close) and updates the SDS
// checksum; the header checksum is left alone, as PMDK does (SDS lies beyond CKSUM_2K's range).
void set_shutdown_dirty(PoolHeader& header, bool dirty);

// The checks rpmemd's open made on a target set's headers (util_header_check_remote), in its
// order: every header non-zero; signature, major and the three feature masks equal to part
// 0's; checksum valid; pool set UUID, replica links and arch flags equal to part 0's; part
// links forming the ring. Returns part 0's attributes (zero for NOHDRS). `headers` holds one
// header per header-carrying part. Errors are EINVAL naming the part and the field.
Result<PoolAttributes> check_target_headers(const PoolSet& set,
                                            std::span<const PoolHeader> headers);

// rpmemd's set_attr (util_replica_set_attr): rewrites signature, major, features, pool set
// UUID, replica links and arch flags of every header from `attributes`; part 0's UUID becomes
// attributes.uuid and its ring neighbours' links follow; checksums are recomputed. EINVAL for
// NOHDRS sets and for zero attributes (where PMDK crashed).
Result<void> apply_attributes(const PoolSet& set, std::span<PoolHeader> headers,
                              const PoolAttributes& attributes);

// Points the replica links of every header at `prev` and `next` (PMDK links the replicas of a
// set in a ring through part 0's UUIDs; a set of one replica links to its own part 0) and
// recomputes the checksums. Failover uses it: a promoted target links to itself, so that
// libpmemobj opens its set alone, and to the old primary again when that one rejoins. Only the
// links and the checksum change, so rewriting a header torn by a crash in between repairs it.
void link_replicas(std::span<PoolHeader> headers, const Uuid& prev, const Uuid& next);

} // namespace rpmem::poolset
