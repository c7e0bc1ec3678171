// SPDX-License-Identifier: BSD-3-Clause
// rpmem-bench's command line (CLI11), run as a program: help, usage errors that name the option
// at fault with exit status 2, and the JSON report of a short raw run read back with
// nlohmann-json. RPMEM_BENCH comes from meson.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "process.h"

namespace {

using rpmem::test::required_environment;
using rpmem::test::RunResult;

RunResult bench(std::vector<std::string> args) {
    args.insert(args.begin(), required_environment("RPMEM_BENCH"));
    return rpmem::test::run(args);
}

} // namespace

TEST_CASE("rpmem-bench: help and usage errors", "[rpmem-bench]") {
    CHECK(bench({"--help"}).status == 0);
    for (const char* command : {"raw", "persist", "resync", "digest"}) {
        CAPTURE(command);
        const RunResult help = bench({command, "--help"});
        CHECK(help.status == 0);
        CHECK_THAT(help.out, Catch::Contains("--format") && Catch::Contains("--output"));
    }
    struct Wrong {
        std::vector<std::string> args;
        std::string named; // what the message must name
    };
    for (const Wrong& wrong : {
             Wrong{{}, "subcommand"},
             Wrong{{"bogus"}, "bogus"},
             Wrong{{"raw", "--sizes", "8,banana"}, "--sizes"},
             Wrong{{"raw", "--sizes", "8Q"}, "--sizes"},
             Wrong{{"raw", "--ops", "apm,teleport"}, "--ops"},
             Wrong{{"raw", "--lanes", "0"}, "--lanes"},
             Wrong{{"raw", "--wait", "sometimes"}, "--wait"},
             Wrong{{"raw", "--format", "yaml"}, "--format"},
             Wrong{{"raw", "--iterations"}, "--iterations"},
             Wrong{{"persist", "--duration", "-1"}, "--duration"},
             Wrong{{"resync", "--dirty", "0.5,2"}, "--dirty"},
             Wrong{{"resync", "--pool-size", "1M"}, "--pool-size"},
             Wrong{{"resync", "--lanes", "0"}, "--lanes"},
             Wrong{{"digest", "--extent-size", "3K"}, "--extent-size"},
             Wrong{{"persist", "stray"}, "stray"},
         }) {
        CAPTURE(wrong.args);
        const RunResult result = bench(wrong.args);
        CHECK(result.status == 2);
        CHECK_THAT(result.err, Catch::Contains(wrong.named));
        CHECK_THAT(result.err, Catch::Contains("--help"));
    }
}

TEST_CASE("rpmem-bench pmemobj --pmdk-peer names what the PMDK tree lacks", "[rpmem-bench]") {
    if (bench({"pmemobj", "--help"}).status != 0) {
        WARN("rpmem-bench was built without libpmemobj: no pmemobj command");
        return;
    }
    // Refused before anything runs: no pool, no rpmemd, no child.
    const RunResult result = bench({"pmemobj", "--pmdk-peer", "/nonexistent/pmdk"});
    CHECK(result.status == 2);
    CHECK_THAT(result.err, Catch::Contains("/nonexistent/pmdk/src/nondebug/librpmem.so.1") &&
                               Catch::Contains("make librpmem"));
}

TEST_CASE("rpmem-bench raw writes its report as JSON", "[rpmem-bench]") {
    const RunResult result = bench({"raw", "--provider", "tcp", "--ops", "apm,commit", "--sizes",
                                    "64,4K", "--lanes", "1", "--iterations", "50", "--warmup", "0",
                                    "--duration", "0.2", "--format", "json"});
    INFO(result.err);
    REQUIRE(result.status == 0);
    const auto report = nlohmann::json::parse(result.out);
    CHECK(report["benchmark"] == "raw");
    CHECK(report["context"]["provider"] == "tcp");
    REQUIRE(report["results"].size() == 4); // 2 operations x 2 sizes x 1 lane count
    for (const auto& row : report["results"]) {
        CAPTURE(row.dump());
        CHECK((row["operation"] == "apm" || row["operation"] == "commit"));
        CHECK((row["size"] == 64 || row["size"] == 4096));
        CHECK(row["lanes"] == 1);
        CHECK(row["iterations"].get<int>() > 0);
        CHECK(row["p50_us"].get<double>() > 0);
        CHECK(row["p50_us"].get<double>() <= row["p99_us"].get<double>());
    }
}
