// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/pool_attributes.h"
#include "client/master_proof.h"
#include "poolset/pool_header.h"

namespace rpmem::test {

// A libpmemobj-shaped pool image for the direction-proof tests: a valid PMDK header (signature
// PMEMOBJ, CKSUM_2K) of a master whose ring links to one replica, and a valid 2 KiB pool
// descriptor with the given run id; the rest is caller data. `replica_attributes()` is what the
// replica's rpmemd would answer an open with.
struct PmemobjPoolImage {
    poolset::Uuid poolset_uuid{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    poolset::Uuid master_uuid{0xa1, 0xa2, 0xa3};
    poolset::Uuid replica_uuid{0xb1, 0xb2, 0xb3};

    poolset::PoolHeader master_header() const {
        poolset::PoolHeader header;
        std::memcpy(header.signature.data(), "PMEMOBJ", 8);
        header.major = 6;
        header.features.incompat = poolset::kFeatureChecksum2K;
        header.poolset_uuid = poolset_uuid;
        header.uuid = master_uuid;
        header.prev_part_uuid = header.next_part_uuid = master_uuid;
        header.prev_repl_uuid = header.next_repl_uuid = replica_uuid;
        header.arch_flags = poolset::ArchFlags::local();
        header.update_checksum();
        return header;
    }

    PoolAttributes replica_attributes() const {
        PoolAttributes attributes = master_header().attributes();
        attributes.uuid = replica_uuid;
        attributes.prev_uuid = attributes.next_uuid = master_uuid;
        return attributes;
    }

    // Writes the header (unless `blank_header`) and a descriptor at `run` into `pool`.
    void write(std::vector<std::byte>& pool, std::uint64_t run, bool blank_header = false) const {
        if (!blank_header) {
            const auto bytes = master_header().encode();
            std::memcpy(pool.data(), bytes.data(), bytes.size());
        }
        write_descriptor(pool, run);
    }

    static void write_descriptor(std::vector<std::byte>& pool, std::uint64_t run) {
        std::byte* descriptor = pool.data() + client::kPmemobjDescriptorOffset;
        std::memcpy(descriptor, "test-layout", 11);
        const std::uint64_t checksum = poolset::fletcher64(
            {reinterpret_cast<const std::uint8_t*>(descriptor), client::kPmemobjDescriptorSize},
            client::kPmemobjDescriptorSize - 8, client::kPmemobjDescriptorSize);
        std::memcpy(descriptor + client::kPmemobjDescriptorSize - 8, &checksum, 8);
        std::memcpy(pool.data() + client::kPmemobjRunIdOffset, &run, 8);
    }
};

} // namespace rpmem::test
