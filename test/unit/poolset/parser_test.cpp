// SPDX-License-Identifier: BSD-3-Clause
// Every syntax element of poolset(5) and every error message of poolset::parse().
#include <cerrno>
#include <string>

#include <catch2/catch.hpp>

#include "poolset/parser.h"

using namespace rpmem::poolset;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

PoolSet parse_ok(std::string_view text) {
    auto set = parse(text, "test.set");
    INFO(text);
    if (!set)
        FAIL("unexpected error: " << set.error().message());
    return *set;
}

// Asserts that `text` fails with EINVAL and a message starting "test.set:LINE:COLUMN: " and
// containing `expected`.
void parse_fails(std::string_view text, std::size_t line, std::size_t column,
                 std::string_view expected) {
    INFO("input: " << std::string(text));
    auto set = parse(text, "test.set");
    REQUIRE_FALSE(set);
    CHECK(set.error().errno_value() == EINVAL);
    std::string prefix = "test.set:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
    CHECK_THAT(set.error().message(), Catch::StartsWith(prefix));
    CHECK_THAT(set.error().message(), Catch::Contains(std::string(expected)));
}

} // namespace

TEST_CASE("a minimal set has one local replica with one part", "[parser]") {
    PoolSet set = parse_ok("PMEMPOOLSET\n8M /pmem/a\n");
    CHECK(set.origin == "test.set");
    REQUIRE(set.replicas.size() == 1);
    const ReplicaSpec& replica = set.replicas[0];
    CHECK_FALSE(replica.is_remote());
    CHECK(replica.line == 1);
    REQUIRE(replica.parts.size() == 1);
    CHECK(replica.parts[0].size == 8 * kMiB);
    CHECK(replica.parts[0].path == "/pmem/a");
    CHECK(replica.parts[0].line == 2);
    CHECK(replica.parts[0].column == 1);
    CHECK(set.options == Options{});
}

TEST_CASE("line endings: CRLF, a missing final newline, trailing blank lines", "[parser]") {
    CHECK(parse_ok("PMEMPOOLSET\r\n8M /a\r\n").replicas[0].parts[0].path == "/a");
    CHECK(parse_ok("PMEMPOOLSET\n8M /a").replicas[0].parts[0].path == "/a");
    CHECK(parse_ok("PMEMPOOLSET\n8M /a\n\n\n").replicas[0].parts.size() == 1);
    CHECK(parse_ok("PMEMPOOLSET\n\n8M /a\n\n8M /b\n").replicas[0].parts.size() == 2);
}

TEST_CASE("comments: whole lines from column 1 and the rest of a line", "[parser]") {
    PoolSet set = parse_ok("PMEMPOOLSET\n# a comment\n#\n8M /a # trailing\n8M /b#x\n");
    REQUIRE(set.replicas[0].parts.size() == 2);
    CHECK(set.replicas[0].parts[0].path == "/a");
    CHECK(set.replicas[0].parts[1].path == "/b");
    CHECK(set.replicas[0].parts[1].line == 5);
}

TEST_CASE("blanks: spaces and tabs separate tokens and may lead a part line", "[parser]") {
    PoolSet set = parse_ok("PMEMPOOLSET\n \t8M\t\t/a   \n");
    REQUIRE(set.replicas[0].parts.size() == 1);
    CHECK(set.replicas[0].parts[0].path == "/a");
    CHECK(set.replicas[0].parts[0].column == 3);
}

TEST_CASE("part sizes follow PMDK's units", "[parser]") {
    struct Case {
        const char* text;
        std::uint64_t bytes;
    };
    const Case cases[] = {
        {"8388608", 8388608},      {"+8M", 8 * kMiB},    {"008M", 8 * kMiB},
        {"4096B", 4096},           {"8192K", 8 * kMiB},  {"8M", 8 * kMiB},
        {"1G", 1ull << 30},        {"1T", 1ull << 40},   {"1P", 1ull << 50},
        {"8192KiB", 8 * kMiB},     {"8MiB", 8 * kMiB},   {"1GiB", 1ull << 30},
        {"1TiB", 1ull << 40},      {"1PiB", 1ull << 50}, {"9000kB", 9000000},
        {"9MB", 9000000},          {"1GB", 1000000000},  {"1TB", 1000000000000},
        {"1PB", 1000000000000000},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        auto size = parse_size(c.text);
        REQUIRE(size);
        CHECK(*size == c.bytes);
        PoolSet set = parse_ok(std::string("PMEMPOOLSET\n") + c.text + " /a\n");
        CHECK(set.replicas[0].parts[0].size == c.bytes);
    }
}

TEST_CASE("parse_size rejects what util_parse_size rejects, and overflow", "[parser]") {
    struct Case {
        const char* text;
        const char* reason;
    };
    const Case cases[] = {
        {"", "expected a decimal number"},
        {"M", "expected a decimal number"},
        {"-8M", "expected a decimal number"},
        {"0x10", "unknown unit 'x10'"},
        {"8m", "unknown unit 'm'"},
        {"8KB", "unknown unit 'KB'"},
        {"8kiB", "unknown unit 'kiB'"},
        {"8Ki", "unknown unit 'Ki'"},
        {"8b", "unknown unit 'b'"},
        {"8.5M", "unknown unit '.5M'"},
        {"8 ", "unknown unit ' '"},
        {"18446744073709551616", "does not fit in 64 bits"},
        {"16384P", "does not fit in 64 bits"},
        {"18446744073709551615K", "does not fit in 64 bits"},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        auto size = parse_size(c.text);
        REQUIRE_FALSE(size);
        CHECK(size.error().errno_value() == EINVAL);
        CHECK_THAT(size.error().message(), Catch::Contains(c.reason));
    }
    CHECK(*parse_size("18446744073709551615") == 18446744073709551615ull);
}

TEST_CASE("format_size names exact binary units", "[parser]") {
    CHECK(format_size(0) == "0 bytes");
    CHECK(format_size(1) == "1 byte");
    CHECK(format_size(1000) == "1000 bytes");
    CHECK(format_size(4096) == "4 KiB");
    CHECK(format_size(8 * kMiB) == "8 MiB");
    CHECK(format_size(8 * kMiB - 4096) == "8188 KiB");
    CHECK(format_size(1ull << 60) == "1024 PiB");
}

TEST_CASE("AUTO sizes a device DAX part", "[parser]") {
    PoolSet set = parse_ok("PMEMPOOLSET\nAUTO /dev/dax0.0\n");
    CHECK_FALSE(set.replicas[0].parts[0].size.has_value());
    CHECK(set.replicas[0].parts[0].path == "/dev/dax0.0");
}

TEST_CASE("OPTION lines set SINGLEHDR and NOHDRS anywhere in the set", "[parser]") {
    CHECK(parse_ok("PMEMPOOLSET\nOPTION SINGLEHDR\n8M /a\n").options == Options{true, false});
    CHECK(parse_ok("PMEMPOOLSET\n8M /a\nOPTION NOHDRS\n").options == Options{false, true});
    CHECK(parse_ok("PMEMPOOLSET\nOPTION SINGLEHDR NOHDRS\n8M /a\n").options == Options{true, true});
    // PMDK only logs repeated options.
    CHECK(parse_ok("PMEMPOOLSET\nOPTION SINGLEHDR\nOPTION SINGLEHDR SINGLEHDR\n8M /a\n").options ==
          Options{true, false});
    // PMDK matches OPTION as a prefix of the line.
    CHECK(parse_ok("PMEMPOOLSET\nOPTIONSINGLEHDR\n8M /a\n").options == Options{true, false});
    CHECK(parse_ok("PMEMPOOLSET\nOPTION\tNOHDRS # no headers\n8M /a\n").options ==
          Options{false, true});
}

TEST_CASE("REPLICA starts a local replica", "[parser]") {
    PoolSet set = parse_ok("PMEMPOOLSET\n8M /a\n8M /b\nREPLICA\n16M /c\nREPLICA# x\n8M /d\n");
    REQUIRE(set.replicas.size() == 3);
    CHECK(set.replicas[0].parts.size() == 2);
    CHECK(set.replicas[1].line == 4);
    REQUIRE(set.replicas[1].parts.size() == 1);
    CHECK(set.replicas[1].parts[0].path == "/c");
    CHECK(set.replicas[2].parts[0].path == "/d");
    CHECK_FALSE(set.has_remote_replicas());
}

TEST_CASE("REPLICA target set: a remote replica", "[parser]") {
    PoolSet set = parse_ok("PMEMPOOLSET\n8M /a\n"
                           "REPLICA user@host:7636 pool.set\n"
                           "REPLICA\t[fd00::1]\tdir/sub.set # comment\n"
                           "REPLICA host2 x.set\n"
                           "REPLICA\n8M /b\n");
    REQUIRE(set.replicas.size() == 5);
    CHECK(set.has_remote_replicas());
    const ReplicaSpec& first = set.replicas[1];
    REQUIRE(first.is_remote());
    CHECK(first.parts.empty());
    CHECK(first.line == 3);
    CHECK(first.remote->target == rpmem::Target{"user", "host", 7636});
    CHECK(first.remote->set_path == "pool.set");
    CHECK(set.replicas[2].remote->target == rpmem::Target{"", "fd00::1", std::nullopt});
    CHECK(set.replicas[2].remote->set_path == "dir/sub.set");
    CHECK(set.replicas[3].remote->target.host == "host2");
    CHECK_FALSE(set.replicas[4].is_remote());
    CHECK(set.replicas[4].parts[0].path == "/b");
}

TEST_CASE("signature errors", "[parser]") {
    parse_fails("", 1, 1, "empty file");
    parse_fails("PMEMPOOLSET", 1, 1, "exactly 'PMEMPOOLSET'");
    parse_fails("PMEMPOOLSET \n8M /a\n", 1, 1, "exactly 'PMEMPOOLSET'");
    parse_fails("PMEMPOOLSET # c\n8M /a\n", 1, 1, "exactly 'PMEMPOOLSET'");
    parse_fails("pmempoolset\n8M /a\n", 1, 1, "exactly 'PMEMPOOLSET'");
    parse_fails("\nPMEMPOOLSET\n8M /a\n", 1, 1, "exactly 'PMEMPOOLSET'");
    parse_fails(" PMEMPOOLSET\n8M /a\n", 1, 1, "exactly 'PMEMPOOLSET'");
}

TEST_CASE("NUL bytes are rejected where they are", "[parser]") {
    using namespace std::string_literals;
    parse_fails("PMEMPOOLSET\n8M /a\0b\n"s, 2, 6, "NUL byte");
    parse_fails("\0"s, 1, 1, "NUL byte");
}

TEST_CASE("part line errors", "[parser]") {
    parse_fails("PMEMPOOLSET\n   \n8M /a\n", 2, 1, "found only blanks");
    parse_fails("PMEMPOOLSET\n  # indented comment\n8M /a\n", 2, 1, "found only blanks");
    parse_fails("PMEMPOOLSET\n8M\n", 2, 3, "missing the path after '8M'");
    parse_fails("PMEMPOOLSET\n8M /a extra\n", 2, 7, "unexpected 'extra' after the part path");
    parse_fails("PMEMPOOLSET\n8M a\n", 2, 4, "the part path 'a' must be absolute");
    parse_fails("PMEMPOOLSET\n8M ./a\n", 2, 4, "must be absolute");
    parse_fails("PMEMPOOLSET\n 8X /a\n", 2, 2, "invalid size '8X': unknown unit 'X'");
    parse_fails("PMEMPOOLSET\nauto /dev/dax0.0\n", 2, 1, "invalid size 'auto'");
    parse_fails("PMEMPOOLSET\n0 /a\n", 2, 1, "must not be zero");
    parse_fails("PMEMPOOLSET\n0M /a\n", 2, 1, "must not be zero");
    parse_fails("PMEMPOOLSET\n99999999999999999999 /a\n", 2, 1, "does not fit in 64 bits");
    parse_fails("PMEMPOOLSET\n8P /a\n8192P /b\n", 3, 1, "larger than a file can be");
    parse_fails("PMEMPOOLSET\nreplica\n", 2, 8, "missing the path after 'replica'");
}

TEST_CASE("OPTION errors", "[parser]") {
    parse_fails("PMEMPOOLSET\nOPTION\n8M /a\n", 2, 7, "expected an option name");
    parse_fails("PMEMPOOLSET\nOPTION  # none\n8M /a\n", 2, 7, "expected an option name");
    parse_fails("PMEMPOOLSET\nOPTION FOO\n8M /a\n", 2, 8, "unknown option 'FOO'");
    parse_fails("PMEMPOOLSET\nOPTION SINGLEHDR singlehdr\n", 2, 18, "unknown option 'singlehdr'");
    parse_fails("PMEMPOOLSET\nOPTIONS SINGLEHDR\n", 2, 7, "unknown option 'S'");
}

TEST_CASE("REPLICA errors", "[parser]") {
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICAS\n8M /b\n", 3, 1, "expected exactly 'REPLICA'");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA \n8M /b\n", 3, 8,
                "expected '[user@]host[:port] relative/path.set'");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA # local?\n8M /b\n", 3, 8,
                "expected '[user@]host[:port] relative/path.set'");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA host\n", 3, 9,
                "expected '[user@]host[:port] relative/path.set'");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA host a.set b\n", 3, 20,
                "unexpected 'b' after the remote pool set name");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA host /abs.set\n", 3, 14,
                "must be a path relative to rpmemd's pool set directory");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA host:99999 a.set\n", 3, 9,
                "invalid target 'host:99999': the port must be a number from 1 to 65535");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA @host a.set\n", 3, 9, "empty user name");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA host a.set\n8M /b\n", 4, 1,
                "unexpected part line: a remote REPLICA (line 3) has no parts");
}

TEST_CASE("replicas without parts", "[parser]") {
    parse_fails("PMEMPOOLSET\n", 2, 1, "the set has no parts");
    parse_fails("PMEMPOOLSET\n# nothing\n", 3, 1, "the set has no parts");
    parse_fails("PMEMPOOLSET\nREPLICA\n8M /a\n", 2, 1, "the set has no parts");
    parse_fails("PMEMPOOLSET\nREPLICA host a.set\n", 2, 1, "the set has no parts");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA\n", 4, 1, "replica 1 (line 3) has no parts");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA\nREPLICA\n8M /b\n", 4, 1,
                "replica 1 (line 3) has no parts");
    parse_fails("PMEMPOOLSET\n8M /a\nREPLICA h a.set\nREPLICA\n", 5, 1,
                "replica 2 (line 4) has no parts");
}

TEST_CASE("the origin names the file in every message", "[parser]") {
    auto set = parse("PMEMPOOLSET\n8Q /a\n", "/etc/pools/my.set");
    REQUIRE_FALSE(set);
    CHECK_THAT(set.error().message(), Catch::StartsWith("/etc/pools/my.set:2:1: "));
}

TEST_CASE("long and binary tokens are quoted safely in messages", "[parser]") {
    std::string text = "PMEMPOOLSET\n8M " + std::string(1000, 'x') + "\n";
    auto set = parse(text, "t");
    REQUIRE_FALSE(set);
    CHECK(set.error().message().size() < 200);
    CHECK_THAT(set.error().message(), Catch::Contains("..."));
    auto binary = parse("PMEMPOOLSET\n8\x01 /a\n", "t");
    REQUIRE_FALSE(binary);
    CHECK_THAT(binary.error().message(), Catch::Contains("'\\x01'"));
}
