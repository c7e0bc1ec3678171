// SPDX-License-Identifier: BSD-3-Clause
// Debian's pmempool as the oracle for local pool sets: for every case of the table, our verdict
// (poolset::parse + validate_local with libpmemobj's limits) must match what `pmempool create
// obj` does with the same set in a fresh temporary directory, and both must match the verdict
// written in the table. For valid sets, our pool size must equal the one pmempool info reports
// (heap offset + heap size of the obj pool).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "poolset/parser.h"
#include "poolset/pool_set.h"
#include "process.h"
#include "temp_dir.h"

using rpmem::test::run;
using rpmem::test::RunResult;
using rpmem::test::TempDir;

namespace {

namespace fs = std::filesystem;

enum class Verdict { valid, invalid };

struct Case {
    const char* name;
    const char* text; // "@" is replaced by the case's fresh directory
    Verdict expected;
};

constexpr Verdict ok = Verdict::valid;
constexpr Verdict bad = Verdict::invalid;

// clang-format off
const Case kCases[] = {
    // sizes and suffixes
    {"bytes",                 "PMEMPOOLSET\n8388608 @/a\n", ok},
    {"suffix K",              "PMEMPOOLSET\n8192K @/a\n", ok},
    {"suffix M",              "PMEMPOOLSET\n8M @/a\n", ok},
    {"suffix MiB",            "PMEMPOOLSET\n8MiB @/a\n", ok},
    {"suffix KiB",            "PMEMPOOLSET\n8192KiB @/a\n", ok},
    {"suffix MB big enough",  "PMEMPOOLSET\n9MB @/a\n", ok},
    {"suffix MB too small",   "PMEMPOOLSET\n8MB @/a\n", bad},
    {"suffix kB too small",   "PMEMPOOLSET\n8192kB @/a\n", bad},
    {"suffix B",              "PMEMPOOLSET\n8388608B @/a\n", ok},
    {"plus sign",             "PMEMPOOLSET\n+8M @/a\n", ok},
    {"leading zeros",         "PMEMPOOLSET\n008M @/a\n", ok},
    {"unaligned size",        "PMEMPOOLSET\n8388609 @/a\n", ok},
    {"unit KB",               "PMEMPOOLSET\n8192KB @/a\n", bad},
    {"unit lowercase m",      "PMEMPOOLSET\n8m @/a\n", bad},
    {"unit mib",              "PMEMPOOLSET\n8mib @/a\n", bad},
    {"decimal point",         "PMEMPOOLSET\n8.5M @/a\n", bad},
    {"hex",                   "PMEMPOOLSET\n0x800000 @/a\n", bad},
    {"zero",                  "PMEMPOOLSET\n0 @/a\n", bad},
    {"negative",              "PMEMPOOLSET\n-8M @/a\n", bad},
    {"overflow",              "PMEMPOOLSET\n18446744073709551616 @/a\n", bad},
    {"pool too small",        "PMEMPOOLSET\n7M @/a\n", bad},
    {"part too small",        "PMEMPOOLSET\n8M @/a\n1M @/b\n", bad},
    {"part just too small",   "PMEMPOOLSET\n8M @/a\n2097151 @/b\n", bad},
    {"part minimum",          "PMEMPOOLSET\n8M @/a\n2M @/b\n", ok},
    {"two parts",             "PMEMPOOLSET\n8M @/a\n8M @/b\n", ok},
    {"headers eat the pool",  "PMEMPOOLSET\n4M @/a\n4M @/b\n", bad},
    {"three parts enough",    "PMEMPOOLSET\n3M @/a\n3M @/b\n3M @/c\n", ok},
    // signature
    {"signature only",        "PMEMPOOLSET", bad},
    {"signature no parts",    "PMEMPOOLSET\n", bad},
    {"signature space",       "PMEMPOOLSET \n8M @/a\n", bad},
    {"signature comment",     "PMEMPOOLSET # set\n8M @/a\n", bad},
    {"signature lowercase",   "pmempoolset\n8M @/a\n", bad},
    {"blank first line",      "\nPMEMPOOLSET\n8M @/a\n", bad},
    // line endings, comments, blanks
    {"crlf",                  "PMEMPOOLSET\r\n8M @/a\r\n", ok},
    {"no final newline",      "PMEMPOOLSET\n8M @/a", ok},
    {"trailing blank lines",  "PMEMPOOLSET\n8M @/a\n\n\n", ok},
    {"comment lines",         "PMEMPOOLSET\n# one\n#\n8M @/a\n# two\n", ok},
    {"trailing comment",      "PMEMPOOLSET\n8M @/a # the part\n", ok},
    {"comment glued",         "PMEMPOOLSET\n8M @/a#x\n", ok},
    {"only a comment",        "PMEMPOOLSET\n# nothing\n", bad},
    {"tabs",                  "PMEMPOOLSET\n8M\t\t@/a\t\n", ok},
    {"indented part",         "PMEMPOOLSET\n \t8M @/a\n", ok},
    {"blank-only line",       "PMEMPOOLSET\n   \n8M @/a\n", bad},
    {"indented comment",      "PMEMPOOLSET\n  # c\n8M @/a\n", bad},
    // part lines
    {"relative path",         "PMEMPOOLSET\n8M a\n", bad},
    {"dot relative path",     "PMEMPOOLSET\n8M ./a\n", bad},
    {"missing path",          "PMEMPOOLSET\n8M\n", bad},
    {"extra token",           "PMEMPOOLSET\n8M @/a extra\n", bad},
    {"duplicate part",        "PMEMPOOLSET\n8M @/a\n8M @/a\n", bad},
    {"duplicate across reps", "PMEMPOOLSET\n8M @/a\nREPLICA\n8M @/a\n", bad},
    // OPTION
    {"SINGLEHDR",             "PMEMPOOLSET\nOPTION SINGLEHDR\n8M @/a\n", ok},
    {"SINGLEHDR small parts", "PMEMPOOLSET\nOPTION SINGLEHDR\n4M @/a\n4M @/b\n", ok},
    {"SINGLEHDR 2M parts",    "PMEMPOOLSET\nOPTION SINGLEHDR\n2M @/a\n2M @/b\n2M @/c\n2M @/d\n", ok},
    {"SINGLEHDR after parts", "PMEMPOOLSET\n4M @/a\n4M @/b\nOPTION SINGLEHDR\n", ok},
    {"SINGLEHDR twice",       "PMEMPOOLSET\nOPTION SINGLEHDR\nOPTION SINGLEHDR SINGLEHDR\n8M @/a\n", ok},
    {"OPTION prefix",         "PMEMPOOLSET\nOPTIONSINGLEHDR\n8M @/a\n", ok},
    {"OPTION tab comment",    "PMEMPOOLSET\nOPTION\tSINGLEHDR # one header\n8M @/a\n", ok},
    {"NOHDRS local",          "PMEMPOOLSET\nOPTION NOHDRS\n8M @/a\n", bad},
    {"SINGLEHDR and NOHDRS",  "PMEMPOOLSET\nOPTION SINGLEHDR NOHDRS\n8M @/a\n", bad},
    {"OPTION no name",        "PMEMPOOLSET\nOPTION\n8M @/a\n", bad},
    {"OPTION unknown",        "PMEMPOOLSET\nOPTION FOO\n8M @/a\n", bad},
    {"OPTION lowercase",      "PMEMPOOLSET\nOPTION singlehdr\n8M @/a\n", bad},
    {"OPTIONS",               "PMEMPOOLSET\nOPTIONS SINGLEHDR\n8M @/a\n", bad},
    // local replicas
    {"local replica",         "PMEMPOOLSET\n8M @/a\nREPLICA\n8M @/b\n", ok},
    {"replica bigger",        "PMEMPOOLSET\n8M @/a\n8M @/b\nREPLICA\n20M @/c\n", ok},
    {"replica too small",     "PMEMPOOLSET\n8M @/a\nREPLICA\n4M @/b\n", bad},
    {"replica glued comment", "PMEMPOOLSET\n8M @/a\nREPLICA#c\n8M @/b\n", ok},
    {"two replicas",          "PMEMPOOLSET\n8M @/a\nREPLICA\n8M @/b\nREPLICA\n4M @/c\n4M @/d\n5M @/e\n", ok},
    {"replica no parts",      "PMEMPOOLSET\n8M @/a\nREPLICA\n", bad},
    {"replica before parts",  "PMEMPOOLSET\nREPLICA\n8M @/a\n", bad},
    {"replica twice",         "PMEMPOOLSET\n8M @/a\nREPLICA\nREPLICA\n8M @/b\n", bad},
    {"REPLICAS",              "PMEMPOOLSET\n8M @/a\nREPLICAS\n8M @/b\n", bad},
    {"REPLICA space",         "PMEMPOOLSET\n8M @/a\nREPLICA \n8M @/b\n", bad},
    {"REPLICA comment",       "PMEMPOOLSET\n8M @/a\nREPLICA # c\n8M @/b\n", bad},
    {"replica lowercase",     "PMEMPOOLSET\n8M @/a\nreplica\n8M @/b\n", bad},
    {"remote no descriptor",  "PMEMPOOLSET\n8M @/a\nREPLICA host\n", bad},
    {"remote absolute desc",  "PMEMPOOLSET\n8M @/a\nREPLICA host /r.set\n", bad},
    {"remote extra token",    "PMEMPOOLSET\n8M @/a\nREPLICA host r.set x\n", bad},
    {"part after remote",     "PMEMPOOLSET\n8M @/a\nREPLICA host r.set\n8M @/b\n", bad},
};
// clang-format on

constexpr const char* kPmempool = "/usr/bin/pmempool";

// Runs pmempool with PMEM_IS_PMEM_FORCE=1 (no msync on the temporary files).
RunResult pmempool(const std::vector<std::string>& args) {
    std::vector<std::string> argv{kPmempool};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, {{"PMEM_IS_PMEM_FORCE", "1"}});
}

// "Heap offset : 0x302000" and "Heap size : 13619200" from pmempool info: their sum is the
// pool size libpmemobj used.
std::optional<std::uint64_t> info_pool_size(const std::string& info) {
    std::optional<std::uint64_t> offset, size;
    std::istringstream lines(info);
    std::string line;
    while (std::getline(lines, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::string value = line.substr(colon + 1);
        if (line.rfind("Heap offset", 0) == 0)
            offset = std::stoull(value, nullptr, 0);
        else if (line.rfind("Heap size", 0) == 0)
            size = std::stoull(value, nullptr, 0);
    }
    if (!offset || !size)
        return std::nullopt;
    return *offset + *size;
}

} // namespace

TEST_CASE("our verdict on local pool sets matches pmempool create obj", "[compat][poolset]") {
    REQUIRE(access(kPmempool, X_OK) == 0);
    STATIC_REQUIRE(std::size(kCases) >= 40);

    std::size_t agreed = 0;
    std::size_t sizes_compared = 0;
    for (const Case& c : kCases) {
        TempDir dir;
        const std::string text = dir.expand(c.text);
        const fs::path set_file = dir.write("pool.set", text);

        auto parsed = rpmem::poolset::parse(text, set_file.string());
        bool ours = parsed && rpmem::poolset::validate_local(*parsed);
        std::string our_reason = !parsed ? parsed.error().message()
                                 : ours  ? "valid"
                                        : rpmem::poolset::validate_local(*parsed).error().message();

        const RunResult created = pmempool({"create", "obj", set_file.string()});
        bool theirs = created.status == 0;

        INFO("case '" << c.name << "'\nset:\n"
                      << text << "\nours: " << our_reason << "\npmempool (exit " << created.status
                      << "): " << created.output());
        CHECK(ours == theirs);
        CHECK(ours == (c.expected == Verdict::valid));
        if (ours == theirs)
            ++agreed;

        if (ours && theirs) {
            const RunResult info = pmempool({"info", set_file.string()});
            auto pool_size = info_pool_size(info.out);
            REQUIRE(pool_size);
            CHECK(parsed->pool_size() == *pool_size);
            ++sizes_compared;
        }
    }
    WARN("pmempool oracle: " << agreed << " of " << std::size(kCases)
                             << " cases agree; pool size compared on " << sizes_compared);
    CHECK(agreed == std::size(kCases));
}
