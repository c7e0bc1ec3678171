// SPDX-License-Identifier: BSD-3-Clause
// The direction proof (client/master_proof.h): which local pools may be copied over a replica.
#include <cstring>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "client/master_proof.h"
#include "pmemobj_pool_image.h"

using rpmem::client::kPmemobjDescriptorOffset;
using rpmem::client::kPmemobjProofLength;
using rpmem::client::MasterProof;
using rpmem::client::prove_master;
using rpmem::test::PmemobjPoolImage;

namespace {

constexpr std::size_t kPoolSize = 64 * 1024;

std::vector<std::byte> replica_descriptor(std::uint64_t run) {
    std::vector<std::byte> pool(kPoolSize);
    PmemobjPoolImage::write_descriptor(pool, run);
    return {pool.begin() + kPmemobjDescriptorOffset,
            pool.begin() + kPmemobjDescriptorOffset + kPmemobjProofLength};
}

} // namespace

TEST_CASE("a libpmemobj master at the replica's run or newer is proven") {
    PmemobjPoolImage image;
    std::vector<std::byte> local(kPoolSize);
    image.write(local, 12);
    auto same = prove_master(local, image.replica_attributes(), replica_descriptor(12));
    CHECK(same.proven());
    CHECK(same.local_run == 12U);
    CHECK(same.replica_run == 12U);
    auto newer = prove_master(local, image.replica_attributes(), replica_descriptor(8));
    CHECK(newer.proven());
    CHECK_THAT(newer.reason, Catch::Contains("newer run (12 here, 8 on the replica)"));
    // A replica whose descriptor is blank or torn is behind any valid master.
    CHECK(
        prove_master(local, image.replica_attributes(), std::vector<std::byte>(kPmemobjProofLength))
            .proven());
    CHECK(prove_master(local, image.replica_attributes(), {}).proven());
}

TEST_CASE("a local pool older than its replica is refused with both runs named") {
    PmemobjPoolImage image;
    std::vector<std::byte> local(kPoolSize);
    image.write(local, 4);
    auto older = prove_master(local, image.replica_attributes(), replica_descriptor(10));
    CHECK(older.verdict == MasterProof::Verdict::older);
    CHECK_THAT(older.reason,
               Catch::Contains("run 4 here") && Catch::Contains("run 10 on the replica"));
}

TEST_CASE("what proves nothing leaves the replica as it is") {
    PmemobjPoolImage image;
    const auto attributes = image.replica_attributes();
    const auto descriptor = replica_descriptor(10);
    std::vector<std::byte> local(kPoolSize);

    SECTION("a blank device") {
        auto proof = prove_master(local, attributes, descriptor);
        CHECK(proof.verdict == MasterProof::Verdict::unproven);
        CHECK_THAT(proof.reason, Catch::Contains("blank"));
    }
    SECTION("a raw librpmem buffer") {
        std::memset(local.data(), 0x5a, local.size());
        auto proof = prove_master(local, attributes, descriptor);
        CHECK(proof.verdict == MasterProof::Verdict::unproven);
        CHECK_THAT(proof.reason, Catch::Contains("checksum"));
    }
    SECTION("a valid header in front of blank data (libpmempool re-creating a broken part)") {
        image.write(local, 0);
        std::memset(local.data() + kPmemobjDescriptorOffset, 0, 4096);
        auto proof = prove_master(local, attributes, descriptor);
        CHECK(proof.verdict == MasterProof::Verdict::unproven);
        CHECK_THAT(proof.reason, Catch::Contains("descriptor is not valid"));
    }
    SECTION("another pool set") {
        image.write(local, 10);
        auto foreign = attributes;
        foreign.poolset_uuid[0] ^= 0xff;
        CHECK(prove_master(local, foreign, descriptor).verdict == MasterProof::Verdict::unproven);
    }
    SECTION("a pool of the same set not linked to this replica") {
        image.write(local, 10);
        auto elsewhere = attributes;
        elsewhere.uuid = {0xc1};
        elsewhere.prev_uuid = elsewhere.next_uuid = {0xc2};
        CHECK(prove_master(local, elsewhere, descriptor).verdict == MasterProof::Verdict::unproven);
    }
    SECTION("libpmempool's stand-in: a copy of the replica's own header") {
        PmemobjPoolImage as_replica = image;
        std::swap(as_replica.master_uuid, as_replica.replica_uuid);
        as_replica.write(local, 10);
        CHECK(prove_master(local, attributes, descriptor).verdict ==
              MasterProof::Verdict::unproven);
    }
    SECTION("a pool without headers (OPTION NOHDRS)") {
        image.write(local, 10);
        CHECK(prove_master(local, rpmem::PoolAttributes{}, descriptor).verdict ==
              MasterProof::Verdict::unproven);
    }
}

TEST_CASE("a valid header of another signature is proven by the header alone") {
    PmemobjPoolImage image;
    std::vector<std::byte> local(kPoolSize);
    auto header = image.master_header();
    std::memcpy(header.signature.data(), "MYPOOL\0", 8);
    header.update_checksum();
    const auto bytes = header.encode();
    std::memcpy(local.data(), bytes.data(), bytes.size());
    auto attributes = image.replica_attributes();
    attributes.signature = header.signature;
    auto proof = prove_master(local, attributes, {});
    CHECK(proof.proven());
    CHECK_FALSE(proof.local_run.has_value());
}
