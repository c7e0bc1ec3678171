// SPDX-License-Identifier: BSD-3-Clause
// PMDK's size rules (header space, net size, pool size) and the local / rpmemd validity checks.
#include <cerrno>
#include <string>

#include <catch2/catch.hpp>

#include "poolset/parser.h"
#include "poolset/pool_set.h"

using namespace rpmem::poolset;

namespace {

constexpr std::uint64_t kKiB = 1 << 10;
constexpr std::uint64_t kMiB = 1 << 20;

PoolSet parsed(std::string_view text) {
    auto set = parse(text, "s.set");
    INFO(text);
    if (!set)
        FAIL("unexpected error: " << set.error().message());
    return *set;
}

std::string invalid_local(std::string_view text, SizeLimits limits = kObjLimits) {
    auto valid = validate_local(parsed(text), limits);
    if (valid)
        return "(valid)";
    CHECK(valid.error().errno_value() == EINVAL);
    return valid.error().message();
}

std::string invalid_target(std::string_view text) {
    auto valid = validate_for_target(parsed(text));
    if (valid)
        return "(valid)";
    CHECK(valid.error().errno_value() == EINVAL);
    return valid.error().message();
}

} // namespace

TEST_CASE("every part but the first gives 4 KiB to its header by default", "[pool_set]") {
    PoolSet set = parsed("PMEMPOOLSET\n8M /a\n8M /b\n8M /c\n");
    const ReplicaSpec& replica = set.replicas[0];
    CHECK(set.header_count(replica) == 3);
    CHECK(set.net_size(replica) == 24 * kMiB - 2 * 4 * kKiB);
    CHECK(set.pool_size() == 24 * kMiB - 8 * kKiB);
    CHECK(set.skipped_header_bytes(0) == 0);
    CHECK(set.skipped_header_bytes(1) == kHeaderSize);
    CHECK(set.skipped_header_bytes(2) == kHeaderSize);
}

TEST_CASE("SINGLEHDR keeps only part 0's header; NOHDRS keeps none", "[pool_set]") {
    PoolSet single = parsed("PMEMPOOLSET\nOPTION SINGLEHDR\n8M /a\n8M /b\n");
    CHECK(single.header_count(single.replicas[0]) == 1);
    CHECK(single.net_size(single.replicas[0]) == 16 * kMiB);
    CHECK(single.skipped_header_bytes(1) == 0);

    PoolSet none = parsed("PMEMPOOLSET\nOPTION NOHDRS\n8M /a\n8M /b\n");
    CHECK(none.header_count(none.replicas[0]) == 0);
    CHECK(none.net_size(none.replicas[0]) == 16 * kMiB);
    CHECK(none.skipped_header_bytes(1) == 0);

    PoolSet both = parsed("PMEMPOOLSET\nOPTION NOHDRS SINGLEHDR\n8M /a\n8M /b\n");
    CHECK(both.header_count(both.replicas[0]) == 1); // PMDK: SINGLEHDR wins
}

TEST_CASE("part sizes are rounded down to 4 KiB", "[pool_set]") {
    PoolSet set = parsed("PMEMPOOLSET\n8388609 /a\n10000 /b\n");
    // 8 MiB + 8 KiB (10000 rounded down) - one 4 KiB header.
    CHECK(set.net_size(set.replicas[0]) == 8 * kMiB + 8 * kKiB - 4 * kKiB);
    PoolSet tiny = parsed("PMEMPOOLSET\n1 /a\n1 /b\n");
    CHECK(tiny.net_size(tiny.replicas[0]) == 0); // no wrap-around below zero
}

TEST_CASE("sizes saturate instead of overflowing", "[pool_set]") {
    PoolSet set = parsed("PMEMPOOLSET\n8191P /a\n8191P /b\n8191P /c\n");
    CHECK(set.net_size(set.replicas[0]) == UINT64_MAX - 2 * kHeaderSize);
}

TEST_CASE("the pool size is the smallest local replica; remote and AUTO", "[pool_set]") {
    PoolSet set = parsed("PMEMPOOLSET\n16M /a\nREPLICA host r.set\nREPLICA\n8M /b\n");
    CHECK(set.net_size(set.replicas[1]) == std::nullopt);
    CHECK(set.pool_size() == 8 * kMiB);

    PoolSet dax = parsed("PMEMPOOLSET\nAUTO /dev/dax0.0\n");
    CHECK(dax.net_size(dax.replicas[0]) == std::nullopt);
    CHECK(dax.pool_size() == std::nullopt);
}

TEST_CASE("validate_local: libpmemobj's limits", "[pool_set]") {
    CHECK(invalid_local("PMEMPOOLSET\n8M /a\n") == "(valid)");
    CHECK(invalid_local("PMEMPOOLSET\n2M /a\n6M /b\n") ==
          "s.set:1: replica 0 has a net pool size of 8188 KiB, less than the minimum of 8 MiB");
    CHECK(invalid_local("PMEMPOOLSET\nOPTION SINGLEHDR\n2M /a\n6M /b\n") == "(valid)");
    CHECK(invalid_local("PMEMPOOLSET\n8M /a\n2097151 /b\n") ==
          "s.set:3: part '/b' has 2097151 bytes, less than the minimum part size of 2 MiB");
    CHECK(invalid_local("PMEMPOOLSET\n8M /a\nREPLICA\n7M /b\n") ==
          "s.set:3: replica 1 has a net pool size of 7 MiB, less than the minimum of 8 MiB");
    CHECK(invalid_local("PMEMPOOLSET\n8M /a\nREPLICA\n8M /a\n") ==
          "s.set:4: part '/a' is listed more than once in the set");
    CHECK(invalid_local("PMEMPOOLSET\nOPTION NOHDRS\n8M /a\n") ==
          "s.set:1: OPTION NOHDRS is only for sets served by rpmemd, not for local pools");
    CHECK(invalid_local("PMEMPOOLSET\n8M /a\nREPLICA h r.set\n") == "(valid)");
    CHECK(invalid_local("PMEMPOOLSET\nAUTO /dev/dax0.0\n") == "(valid)");
    CHECK(invalid_local("PMEMPOOLSET\n8K /a\n", SizeLimits{8 * kKiB, 4 * kKiB}) == "(valid)");
}

TEST_CASE("validate_for_target: rpmemd's rules", "[pool_set]") {
    CHECK(invalid_target("PMEMPOOLSET\n2M /a\n") == "(valid)");
    CHECK(invalid_target("PMEMPOOLSET\nOPTION NOHDRS\n2M /a\n2M /b\n") == "(valid)");
    CHECK(invalid_target("PMEMPOOLSET\nOPTION SINGLEHDR\n2M /a\n") == "(valid)");
    CHECK(invalid_target("PMEMPOOLSET\n8M /a\nREPLICA\n8M /b\n") ==
          "s.set:3: a set served by rpmemd must not contain replicas");
    CHECK(invalid_target("PMEMPOOLSET\n8M /a\nREPLICA h x.set\n") ==
          "s.set:3: a set served by rpmemd must not contain remote replicas");
    CHECK(invalid_target("PMEMPOOLSET\n1M /a\n") ==
          "s.set:2: part '/a' has 1 MiB, less than the minimum part size of 2 MiB");
    CHECK(invalid_target("PMEMPOOLSET\nOPTION SINGLEHDR NOHDRS\n2M /a\n") ==
          "s.set:1: OPTION SINGLEHDR and OPTION NOHDRS exclude each other");
    CHECK(invalid_target("PMEMPOOLSET\n2M /a\n2M /a\n") ==
          "s.set:3: part '/a' is listed more than once in the set");
}

TEST_CASE("validate_for_target: the 8 KiB minimum pool", "[pool_set]") {
    // Parts of 2 MiB always give more than 8 KiB; the limit shows with a smaller part limit.
    PoolSet set = parsed("PMEMPOOLSET\n4K /a\n");
    auto valid = validate_local(set, SizeLimits{kTargetLimits.min_pool_size, 0});
    REQUIRE_FALSE(valid);
    CHECK(valid.error().message() ==
          "s.set:1: replica 0 has a net pool size of 4 KiB, less than the minimum of 8 KiB");
}
