// SPDX-License-Identifier: BSD-3-Clause
// Golden test of the pool header layer against Debian's PMDK: `pmempool create obj` builds a
// real 2-replica pool; we decode its headers, check PMDK's checksum with ours, re-encode them
// byte for byte, and rebuild replica 1's headers the way rpmemd would have (from the pool
// attributes libpmemobj sends for a replica) and compare bytes.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "process.h"
#include "temp_dir.h"

using namespace rpmem::poolset;
using rpmem::test::run;
using rpmem::test::RunResult;
using rpmem::test::TempDir;

namespace {

namespace fs = std::filesystem;

void pmempool_create_obj(const fs::path& set_file) {
    // PMEM_IS_PMEM_FORCE: no msync on the temporary files.
    const RunResult created = run({"/usr/bin/pmempool", "create", "obj", set_file.string()},
                                  {{"PMEM_IS_PMEM_FORCE", "1"}});
    INFO(created.output());
    REQUIRE(created.status == 0);
}

PoolHeader::Bytes read_header_bytes(const fs::path& part) {
    PoolHeader::Bytes bytes{};
    std::ifstream in(part, std::ios::binary);
    REQUIRE(in.read(reinterpret_cast<char*>(bytes.data()), bytes.size()));
    return bytes;
}

// Creates the pool from `set_text` (with "@" standing for a fresh directory) and returns the
// raw header bytes of every header-carrying part, replica by replica.
struct GoldenPool {
    TempDir dir;
    PoolSet set;
    std::vector<std::vector<PoolHeader::Bytes>> raw; // [replica][part]

    explicit GoldenPool(std::string_view set_text) {
        const std::string text = dir.expand(set_text);
        const fs::path set_file = dir.write("pool.set", text);
        auto parsed = parse(text, set_file.string());
        REQUIRE(parsed);
        set = *parsed;
        pmempool_create_obj(set_file);
        for (const ReplicaSpec& replica : set.replicas) {
            raw.emplace_back();
            for (std::size_t p = 0; p < set.header_count(replica); ++p)
                raw.back().push_back(read_header_bytes(replica.parts[p].path));
        }
    }
};

// The target set rpmemd would serve for replica `r` of `golden`: same parts and options.
PoolSet target_set_for(const GoldenPool& golden, std::size_t r) {
    std::string text = "PMEMPOOLSET\n";
    if (golden.set.options.single_header)
        text += "OPTION SINGLEHDR\n";
    for (const Part& part : golden.set.replicas[r].parts)
        text += std::to_string(*part.size) + " /target" + part.path + "\n";
    auto set = parse(text, "target.set");
    REQUIRE(set);
    return *set;
}

void check_golden(std::string_view set_text) {
    GoldenPool golden(set_text);
    const std::size_t replicas = golden.set.replicas.size();
    std::vector<std::vector<PoolHeader>> headers(replicas);

    for (std::size_t r = 0; r < replicas; ++r) {
        for (std::size_t p = 0; p < golden.raw[r].size(); ++p) {
            INFO("replica " << r << " part " << p);
            const PoolHeader::Bytes& bytes = golden.raw[r][p];
            PoolHeader header = PoolHeader::decode(bytes);
            CHECK(header.encode() == bytes);
            CHECK(header.checksum != 0);
            CHECK(header.compute_checksum() == header.checksum);
            CHECK(std::memcmp(header.signature.data(), "PMEMOBJ", 8) == 0);
            CHECK(header.arch_flags == ArchFlags::local());
            CHECK((header.features.incompat & kFeatureChecksum2K) != 0);
            CHECK(((header.features.incompat & kFeatureSingleHeader) != 0) ==
                  golden.set.options.single_header);
            headers[r].push_back(header);
        }
    }

    // Replica ring: each replica's part 0 links to its neighbours' part 0.
    for (std::size_t r = 0; r < replicas; ++r) {
        const PoolHeader& first = headers[r][0];
        CHECK(first.next_repl_uuid == headers[(r + 1) % replicas][0].uuid);
        CHECK(first.prev_repl_uuid == headers[(r + replicas - 1) % replicas][0].uuid);
    }

    // rpmemd's view of replica 1: the target set accepts the real headers on open, and the
    // headers built from the attributes libpmemobj would send equal the real ones byte for
    // byte (given the same random part UUIDs and file ctimes).
    PoolSet target = target_set_for(golden, 1);
    const std::vector<PoolHeader>& real = headers[1];
    auto opened = check_target_headers(target, real);
    REQUIRE(opened);
    CHECK(*opened == real[0].attributes());

    std::vector<std::uint64_t> crtimes;
    for (std::size_t p = 0; p < target.replicas[0].parts.size(); ++p)
        crtimes.push_back(p < real.size() ? real[p].crtime : 0);
    std::size_t next = 0;
    UuidSource replay = [&]() {
        // PMDK draws one UUID per header-carrying part, then puts the given one in part 0.
        Uuid uuid = real[next % real.size()].uuid;
        ++next;
        return uuid;
    };
    auto built = build_target_headers(target, real[0].attributes(), crtimes, replay);
    REQUIRE(built);
    REQUIRE(built->size() == real.size());
    // pmempool closed the pool cleanly; rpmemd clears the dirty flag on close too.
    if (((*built)[0].features.incompat & kFeatureShutdownState) != 0)
        set_shutdown_dirty((*built)[0], false);
    for (std::size_t p = 0; p < real.size(); ++p) {
        INFO("rebuilt replica 1 part " << p);
        CHECK((*built)[p] == real[p]);
        CHECK((*built)[p].encode() == golden.raw[1][p]);
    }

    // set_attr with the attributes the headers already hold changes no byte.
    std::vector<PoolHeader> rewritten = real;
    REQUIRE(apply_attributes(target, rewritten, real[0].attributes()));
    for (std::size_t p = 0; p < real.size(); ++p)
        CHECK(rewritten[p].encode() == golden.raw[1][p]);
}

} // namespace

TEST_CASE("headers of a 2-replica pool made by pmempool", "[compat][pool_header]") {
    REQUIRE(access("/usr/bin/pmempool", X_OK) == 0);
    check_golden("PMEMPOOLSET\n8M @/a\n8M @/b\nREPLICA\n8M @/c\n8M @/d\n");
}

TEST_CASE("headers of a 2-replica SINGLEHDR pool made by pmempool", "[compat][pool_header]") {
    REQUIRE(access("/usr/bin/pmempool", X_OK) == 0);
    check_golden("PMEMPOOLSET\nOPTION SINGLEHDR\n4M @/a\n4M @/b\nREPLICA\n8M @/c\n");
}

TEST_CASE("headers of a 3-replica pool made by pmempool", "[compat][pool_header]") {
    REQUIRE(access("/usr/bin/pmempool", X_OK) == 0);
    check_golden("PMEMPOOLSET\n8M @/a\nREPLICA\n8M @/b\n2M @/c\n2M @/d\nREPLICA\n9M @/e\n");
}
