// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/target.h"

namespace rpmem::poolset {

// Size of a PMDK pool header (struct pool_hdr) and the mapping granularity PMDK uses for parts
// on x86-64 Linux (Mmap_align): the unit of all the size rules below.
inline constexpr std::uint64_t kHeaderSize = 4096;
inline constexpr std::uint64_t kMappingAlignment = 4096;

// One `SIZE PATH` line of a local replica. `size` is empty for `AUTO` (device DAX: the size is
// the device's, known only when the device is opened).
struct Part {
    std::optional<std::uint64_t> size;
    std::string path;
    std::size_t line = 0;   // where the part was declared, for messages
    std::size_t column = 0; // column of the size token

    friend bool operator==(const Part&, const Part&) = default;
};

// A `REPLICA [user@]host[:port] relative/path.set` line: the pool set file named `set_path`,
// relative to rpmemd's pool set directory on `target`.
struct RemoteReplica {
    Target target;
    std::string set_path;

    friend bool operator==(const RemoteReplica&, const RemoteReplica&) = default;
};

// What a pool set file says about one replica: either local (its parts, in order) or remote
// (no parts). Named apart from client::Replica, the live session with a remote replica.
struct ReplicaSpec {
    std::vector<Part> parts;
    std::optional<RemoteReplica> remote;
    std::size_t line = 0; // line of the REPLICA line (or of the signature for replica 0)

    bool is_remote() const noexcept { return remote.has_value(); }

    friend bool operator==(const ReplicaSpec&, const ReplicaSpec&) = default;
};

// The `OPTION` flags of a set. PMDK's parser accepts both at once (and repeated ones); the
// validate_* functions reject the combination.
struct Options {
    bool single_header = false; // OPTION SINGLEHDR: only part 0 of each replica has a header
    bool no_headers = false;    // OPTION NOHDRS: no part has a header (remote target sets only)

    friend bool operator==(const Options&, const Options&) = default;
};

// A parsed pool set file (poolset(5)): replica 0 is the master and is always local. A value
// type made by poolset::parse(); it knows PMDK's size rules but does no I/O.
struct PoolSet {
    std::string origin; // file name (or other origin) used in messages
    std::vector<ReplicaSpec> replicas;
    Options options;

    // Headers a local replica carries: 1 with SINGLEHDR, 0 with NOHDRS, else one per part
    // (SINGLEHDR wins when both are given, as in PMDK).
    std::size_t header_count(const ReplicaSpec& replica) const noexcept;

    // Bytes of header space a part occupies at its start in the contiguous mapping rule: part 0
    // always starts the pool (its header, if any, is the pool's first page); every later part
    // contributes its data after a header page unless SINGLEHDR or NOHDRS is set.
    std::uint64_t skipped_header_bytes(std::size_t part_index) const noexcept;

    // Net pool size of a local replica as PMDK computes it: each part's size rounded down to
    // 4 KiB, summed, minus 4 KiB per header except the first one. Empty when a part is AUTO
    // or the replica is remote; saturates instead of overflowing.
    std::optional<std::uint64_t> net_size(const ReplicaSpec& replica) const noexcept;

    // The pool's size: the smallest net size of the local replicas (remote ones are ignored).
    // Empty when a local replica's size is unknown (AUTO parts).
    std::optional<std::uint64_t> pool_size() const noexcept;

    bool has_remote_replicas() const noexcept;

    friend bool operator==(const PoolSet&, const PoolSet&) = default;
};

// Minimum sizes a pool type imposes: net pool size and raw part file size.
struct SizeLimits {
    std::uint64_t min_pool_size = 0;
    std::uint64_t min_part_size = 0;
};

// libpmemobj's limits (PMEMOBJ_MIN_POOL, PMEMOBJ_MIN_PART): what `pmempool create obj` and
// pmemobj_create() check for a local set.
inline constexpr SizeLimits kObjLimits{8u << 20, 2u << 20};
// rpmemd's limits for a target set (RPMEM_MIN_POOL, RPMEM_MIN_PART).
inline constexpr SizeLimits kTargetLimits{8u << 10, 2u << 20};

// Checks, without I/O, what PMDK checks when it creates a pool from a local set: no NOHDRS,
// not SINGLEHDR and NOHDRS together, each local part at least `limits.min_part_size`, each
// local replica's net size at least `limits.min_pool_size`, no part path listed twice. AUTO
// parts are skipped (their size is the device's). Errors are EINVAL and name origin and line.
Result<void> validate_local(const PoolSet& set, SizeLimits limits = kObjLimits);

// Checks a set that rpmemd is asked to serve: exactly one replica (no local or remote REPLICA
// lines), not SINGLEHDR and NOHDRS together, parts of at least RPMEM_MIN_PART, a net size of at
// least RPMEM_MIN_POOL, no part listed twice.
Result<void> validate_for_target(const PoolSet& set);

} // namespace rpmem::poolset
