// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/pool_attributes.h"

namespace rpmem::client {

// Whether the local pool handed to rpmem_open may be copied over the replica (DESIGN.md,
// invariant 7: proven direction). A replica may be the last good copy, so nothing is copied onto
// it unless the local pool shows that it is that replica's master, at the same or a newer run:
//  - its first 4 KiB are a valid PMDK pool header (non-zero, checksum right) whose signature,
//    major and pool set UUID are the replica's, and the two are linked in the replica ring (the
//    local header names the replica as a neighbour, or the replica names the local one), the
//    local part being another than the replica's own;
//  - for a libpmemobj pool (signature PMEMOBJ), its pool descriptor is valid too (checksum
//    right), and its run id is at least the replica's. libpmemobj adds 2 to the run id at every
//    open and persists it to every replica, so the run id is the generation of the data: a
//    pool restored from an older backup has a smaller one than its replica (`older`), a replica
//    that missed sessions a smaller one than its master.
// A raw librpmem buffer, a blank device, a foreign pool or libpmempool's 8 KiB stand-in of a
// remote header prove nothing (`unproven`): the replica is left as it is, readable with
// rpmem_read. Pure: it reads the bytes it is given, no I/O.
struct MasterProof {
    enum class Verdict {
        proven,   // the local pool is the replica's master, at the same or a newer run
        unproven, // nothing shows that it is: leave the replica as it is
        older,    // it is the replica's master, but older than the replica: refuse
    };
    Verdict verdict = Verdict::unproven;
    // Why, for a log line or an error: "the local pool has no valid pool header", "...".
    std::string reason;
    // libpmemobj pools: the run ids compared (the local one, the replica's; nothing when the
    // replica's descriptor is not valid).
    std::optional<std::uint64_t> local_run;
    std::optional<std::uint64_t> replica_run;

    bool proven() const noexcept { return verdict == Verdict::proven; }
};

// libpmemobj 1.12's pool descriptor, right after the 4 KiB header: 2 KiB whose last 8 bytes are
// its checksum (PMDK's util_checksum over the 2 KiB), then root_offset and run_id.
inline constexpr std::size_t kPmemobjDescriptorOffset = 4096;
inline constexpr std::size_t kPmemobjDescriptorSize = 2048;
inline constexpr std::size_t kPmemobjRunIdOffset = kPmemobjDescriptorOffset + 2048 + 8;
// The bytes from the descriptor's start the run id comparison needs (descriptor and run id).
inline constexpr std::size_t kPmemobjProofLength = kPmemobjRunIdOffset + 8 - 4096;

// Step one, on the local pool alone: whether its header makes it the master of the replica
// whose stored attributes are `replica`. Returns unproven with the reason, or proven when the
// header links the two (then, for libpmemobj pools, local_run is set when the descriptor is
// valid, and prove_master below decides on the run ids). `local_pool` is the caller's whole
// mapping (header included), at least 4 KiB.
MasterProof check_master_header(std::span<const std::byte> local_pool,
                                const PoolAttributes& replica);

// Whether check_master_header's answer still needs the replica's descriptor: a proven
// libpmemobj pool does, to compare run ids.
bool needs_replica_descriptor(const MasterProof& header_proof, const PoolAttributes& replica);

// The whole proof: the header step, then for libpmemobj pools the run ids, the replica's read
// from `replica_descriptor` (the replica's kPmemobjProofLength bytes at offset 4096, read over
// the data path; empty when it could not be read). A replica whose descriptor is not valid
// (blank, torn) is behind any valid local one.
MasterProof prove_master(std::span<const std::byte> local_pool, const PoolAttributes& replica,
                         std::span<const std::byte> replica_descriptor);

// libpmemobj's run id from a descriptor region (kPmemobjProofLength bytes from offset 4096),
// or nothing when the descriptor's checksum is wrong or the region is all zero or short.
std::optional<std::uint64_t> pmemobj_run_id(std::span<const std::byte> descriptor_region);

} // namespace rpmem::client
