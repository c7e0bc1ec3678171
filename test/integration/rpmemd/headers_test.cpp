// SPDX-License-Identifier: BSD-3-Clause
// What a create through the real rpmemd leaves in the part headers, read back from the files
// with poolset's decoder: the fields PMDK's rpmemd wrote for the same request (signature,
// major, features with SINGLEHDR, pool set UUID, part UUIDs in a ring, replica links and arch
// flags from the attributes, creation time), a checksum PMDK's rule accepts, and byte for byte
// what build_target_headers makes from the same inputs.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "channel/client.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;

namespace {

poolset::PoolHeader read_header(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    poolset::PoolHeader::Bytes bytes{};
    in.read(reinterpret_cast<char*>(bytes.data()), bytes.size());
    REQUIRE(in.gcount() == static_cast<std::streamsize>(bytes.size()));
    return poolset::PoolHeader::decode(bytes);
}

} // namespace

TEST_CASE("a create with pmemobj's attributes writes PMDK's headers") {
    bool single = GENERATE(false, true);
    CAPTURE(single);
    TargetHost host;
    const int parts = 3;
    std::string text =
        pool_set_text(host.dir().path(), "pool", parts, "2M", single ? "SINGLEHDR" : "");
    host.write_set("pool.set", text);
    PoolAttributes attributes = pmemobj_attributes(single);

    auto client = host.client();
    protocol::CreateRequest create;
    create.pool_set = "pool.set";
    create.pool_size = 4u << 20;
    create.lanes = 1;
    create.attributes = attributes;
    auto created = channel::expect<protocol::CreateReply>(client->call(create), "create");
    INFO((created ? std::string() : created.error().message()));
    REQUIRE(created);
    // While open, part 0's shutdown state says "dirty" (SDS feature); a clean close clears it.
    CHECK(read_header(host.dir() / "pool.0").sds.dirty == 1);
    REQUIRE(client->call(protocol::CloseRequest{}));

    std::size_t count = single ? 1 : parts;
    std::vector<poolset::PoolHeader> headers;
    for (std::size_t p = 0; p < count; ++p)
        headers.push_back(read_header(host.dir() / ("pool." + std::to_string(p))));
    if (single) {
        // Parts after the first carry no header: their first page is pool data (zero here).
        CHECK(read_header(host.dir() / "pool.1").is_zero());
    }

    auto now = static_cast<std::uint64_t>(std::time(nullptr));
    for (std::size_t p = 0; p < count; ++p) {
        CAPTURE(p);
        const poolset::PoolHeader& h = headers[p];
        CHECK(std::string(h.signature.data()) == "PMEMOBJ");
        CHECK(h.major == 6);
        CHECK(h.features.compat == attributes.compat_features);
        CHECK(h.features.incompat == attributes.incompat_features);
        CHECK(((h.features.incompat & poolset::kFeatureSingleHeader) != 0) == single);
        CHECK(h.features.ro_compat == 0);
        CHECK(h.poolset_uuid == attributes.poolset_uuid);
        CHECK(h.prev_repl_uuid == attributes.prev_uuid);
        CHECK(h.next_repl_uuid == attributes.next_uuid);
        CHECK(h.arch_flags.encode() == attributes.user_flags);
        CHECK(h.prev_part_uuid == headers[(p + count - 1) % count].uuid);
        CHECK(h.next_part_uuid == headers[(p + 1) % count].uuid);
        CHECK(h.crtime <= now);
        CHECK(h.crtime + 3600 > now);
        // PMDK's checksum rule over the bytes as stored: CKSUM_2K covers the first 2 KiB.
        auto bytes = h.encode();
        CHECK(poolset::fletcher64(bytes, 4088, 2048) == h.checksum);
        CHECK(h.checksum_valid());
        for (std::size_t q = 0; q < p; ++q)
            CHECK(headers[q].uuid != h.uuid);
    }
    CHECK(headers[0].uuid == attributes.uuid);
    CHECK(headers[0].sds.dirty == 0);

    auto set = poolset::parse(text, "pool.set");
    REQUIRE(set);
    std::vector<std::uint64_t> times(parts, 0);
    for (std::size_t p = 0; p < count; ++p)
        times[p] = headers[p].crtime;
    std::size_t drawn = 0;
    auto expected = poolset::build_target_headers(*set, attributes, times,
                                                  [&] { return headers[drawn++ % count].uuid; });
    REQUIRE(expected);
    REQUIRE(expected->size() == count);
    for (std::size_t p = 0; p < count; ++p) {
        poolset::PoolHeader want = (*expected)[p];
        poolset::set_shutdown_dirty(want, false);
        CHECK(want.encode() == headers[p].encode());
    }
    // And open hands the attributes back exactly.
    protocol::OpenRequest open;
    open.pool_set = "pool.set";
    open.lanes = 1;
    auto opened = channel::expect<protocol::OpenReply>(client->call(open), "open");
    REQUIRE(opened);
    CHECK(opened->attributes == attributes);
}
