// SPDX-License-Identifier: BSD-3-Clause
// The usage records of RPMEM_USAGE_FILE (client/session_usage.h): what a replica's session
// carried, appended as one JSON line at close and read back by tools and tests.
#include <cerrno>
#include <fstream>

#include <catch2/catch.hpp>

#include "client/session_usage.h"
#include "temp_dir.h"

using rpmem::client::SessionUsage;

namespace {

SessionUsage sample(std::string target, std::uint64_t posted) {
    SessionUsage usage;
    usage.target = std::move(target);
    usage.pool_set = "pool.set";
    usage.lanes = 4;
    usage.persists = 1'000'000;
    usage.deep_persists = 3;
    usage.flushes = 7;
    usage.drains = 9;
    usage.reads = 2;
    usage.bytes = 1ULL << 40;
    usage.posted_by_sibling = posted;
    usage.asynchronous = posted != 0;
    usage.lag_p50_us = posted;
    usage.lag_p99_us = 2 * posted;
    usage.max_lag_us = 3 * posted;
    usage.max_lag_bytes = 4 * posted;
    return usage;
}

} // namespace

TEST_CASE("usage records appended are read back in order", "[client][usage]") {
    rpmem::test::TempDir dir("rpmem-usage");
    const auto file = dir.path() / "usage.jsonl";
    REQUIRE(rpmem::client::append_usage_record(file, sample("10.0.0.1:7636", 0)));
    REQUIRE(rpmem::client::append_usage_record(file, sample("[fe80::1]:7636", 42)));
    auto records = rpmem::client::read_usage_records(file);
    REQUIRE(records);
    REQUIRE(records->size() == 2);
    CHECK((*records)[0] == sample("10.0.0.1:7636", 0));
    CHECK((*records)[1] == sample("[fe80::1]:7636", 42));
}

TEST_CASE("a record from before asynchronous replication reads as synchronous", "[client][usage]") {
    rpmem::test::TempDir dir("rpmem-usage");
    const auto file = dir.path() / "usage.jsonl";
    std::ofstream(file) << R"({"target":"a:1","pool_set":"p.set","lanes":1,"persists":5,)"
                        << R"("deep_persists":0,"flushes":0,"drains":0,"reads":0,"bytes":40,)"
                        << R"("posted_by_sibling":0})"
                        << "\n";
    auto records = rpmem::client::read_usage_records(file);
    REQUIRE(records);
    REQUIRE(records->size() == 1);
    CHECK((*records)[0].persists == 5);
    CHECK_FALSE((*records)[0].asynchronous);
    CHECK((*records)[0].max_lag_bytes == 0);
}

TEST_CASE("a name that is not UTF-8 is kept readable, not a broken record", "[client][usage]") {
    rpmem::test::TempDir dir("rpmem-usage");
    const auto file = dir.path() / "usage.jsonl";
    SessionUsage odd = sample("host:1", 1);
    odd.pool_set = "bad\xff\"name\n";
    REQUIRE(rpmem::client::append_usage_record(file, odd));
    auto records = rpmem::client::read_usage_records(file);
    REQUIRE(records);
    REQUIRE(records->size() == 1);
    CHECK((*records)[0].pool_set.starts_with("bad"));
    CHECK((*records)[0].pool_set.ends_with("\"name\n"));
}

TEST_CASE("a line that is no usage record is refused with its file and line", "[client][usage]") {
    rpmem::test::TempDir dir("rpmem-usage");
    const auto file = dir.path() / "usage.jsonl";
    REQUIRE(rpmem::client::append_usage_record(file, sample("host:1", 0)));
    std::ofstream(file, std::ios::app) << "{\"target\": \"host:1\"}\n";
    auto records = rpmem::client::read_usage_records(file);
    REQUIRE_FALSE(records);
    CHECK(records.error().errno_value() == EINVAL);
    CHECK(records.error().message().find(file.string() + " line 2") != std::string::npos);

    auto missing = rpmem::client::read_usage_records(dir.path() / "none.jsonl");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().errno_value() == ENOENT);
}
