// SPDX-License-Identifier: BSD-3-Clause
#include "client/master_proof.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "poolset/pool_header.h"

namespace rpmem::client {

namespace {

constexpr std::string_view kPmemobjSignature{"PMEMOBJ\0", 8};

bool is_pmemobj(const std::array<char, PoolAttributes::kSignatureLength>& signature) {
    return std::string_view(signature.data(), signature.size()) == kPmemobjSignature;
}

bool all_zero(std::span<const std::byte> bytes) {
    return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

MasterProof unproven(std::string reason) {
    return {MasterProof::Verdict::unproven, std::move(reason), std::nullopt, std::nullopt};
}

} // namespace

std::optional<std::uint64_t> pmemobj_run_id(std::span<const std::byte> region) {
    if (region.size() < kPmemobjProofLength)
        return std::nullopt;
    const auto descriptor = region.first(kPmemobjDescriptorSize);
    if (all_zero(descriptor))
        return std::nullopt;
    std::uint64_t stored = 0;
    std::memcpy(&stored, descriptor.data() + kPmemobjDescriptorSize - 8, sizeof stored);
    const std::uint64_t computed = poolset::fletcher64(
        {reinterpret_cast<const std::uint8_t*>(descriptor.data()), descriptor.size()},
        kPmemobjDescriptorSize - 8, kPmemobjDescriptorSize);
    if (computed != stored)
        return std::nullopt;
    std::uint64_t run = 0;
    std::memcpy(&run, region.data() + (kPmemobjRunIdOffset - kPmemobjDescriptorOffset), sizeof run);
    return run;
}

MasterProof check_master_header(std::span<const std::byte> local_pool,
                                const PoolAttributes& replica) {
    if (replica.is_zero())
        return unproven("the pool has no headers (OPTION NOHDRS), so nothing names its master");
    if (local_pool.size() < poolset::kPoolHeaderSize)
        return unproven("the local pool is smaller than a pool header");
    const auto header =
        poolset::PoolHeader::decode(std::span<const std::uint8_t, poolset::kPoolHeaderSize>(
            reinterpret_cast<const std::uint8_t*>(local_pool.data()), poolset::kPoolHeaderSize));
    if (header.is_zero())
        return unproven("the local pool's header is blank (a new or replaced device, or a "
                        "buffer that is not a pool)");
    if (!header.checksum_valid())
        return unproven("the local pool's first 4096 bytes are not a valid pool header (checksum "
                        "wrong)");
    if (header.signature != replica.signature || header.major != replica.major)
        return unproven(fmt::format(
            "the local pool is another kind of pool (signature '{}' "
            "major {}; the replica's '{}' major {})",
            std::string(header.signature.data(), strnlen(header.signature.data(), 8)), header.major,
            std::string(replica.signature.data(), strnlen(replica.signature.data(), 8)),
            replica.major));
    if (header.poolset_uuid != replica.poolset_uuid)
        return unproven("the local pool belongs to another pool set (its pool set UUID is not "
                        "the replica's)");
    if (header.uuid == replica.uuid)
        return unproven("the local header is the replica's own (a copy of the remote header, not "
                        "its master)");
    const bool linked = header.next_repl_uuid == replica.uuid ||
                        header.prev_repl_uuid == replica.uuid || replica.next_uuid == header.uuid ||
                        replica.prev_uuid == header.uuid;
    if (!linked)
        return unproven("the local pool and the replica are not linked in the pool set's replica "
                        "ring");
    MasterProof proof{MasterProof::Verdict::proven, "the local header names the replica",
                      std::nullopt, std::nullopt};
    if (is_pmemobj(header.signature)) {
        if (local_pool.size() < kPmemobjRunIdOffset + 8)
            return unproven("the local pool ends before libpmemobj's pool descriptor");
        proof.local_run = pmemobj_run_id(local_pool.subspan(kPmemobjDescriptorOffset));
        if (!proof.local_run)
            return unproven("the local pool's libpmemobj descriptor is not valid (blank or torn "
                            "data behind a valid header)");
    }
    return proof;
}

bool needs_replica_descriptor(const MasterProof& header_proof, const PoolAttributes& replica) {
    return header_proof.proven() && is_pmemobj(replica.signature);
}

MasterProof prove_master(std::span<const std::byte> local_pool, const PoolAttributes& replica,
                         std::span<const std::byte> replica_descriptor) {
    MasterProof proof = check_master_header(local_pool, replica);
    if (!needs_replica_descriptor(proof, replica))
        return proof;
    proof.replica_run = pmemobj_run_id(replica_descriptor);
    if (!proof.replica_run) {
        proof.reason = fmt::format("the local pool is the replica's master (run {}); the "
                                   "replica's descriptor is not valid",
                                   *proof.local_run);
        return proof;
    }
    if (*proof.local_run < *proof.replica_run) {
        proof.verdict = MasterProof::Verdict::older;
        proof.reason = fmt::format("the local pool is older than the replica: libpmemobj run {} "
                                   "here, run {} on the replica (a pool restored from an older "
                                   "backup?)",
                                   *proof.local_run, *proof.replica_run);
        return proof;
    }
    proof.reason = *proof.local_run == *proof.replica_run
                       ? fmt::format("the local pool is the replica's master at the same run ({})",
                                     *proof.local_run)
                       : fmt::format("the local pool is the replica's master at a newer run ({} "
                                     "here, {} on the replica)",
                                     *proof.local_run, *proof.replica_run);
    return proof;
}

} // namespace rpmem::client
