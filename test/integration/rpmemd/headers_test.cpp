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
        CHECK(((h.features.incompat & poolset::kFeatureSingleHeader) != 0) == single);
        CHECK(h.crtime <= now);
        CHECK(h.crtime + 3600 > now);
    }
    check_created_headers(headers, attributes);
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
