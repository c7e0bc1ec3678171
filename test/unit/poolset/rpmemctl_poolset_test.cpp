// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl poolset check`, run as a program: exit statuses, text and JSON output on the
// shipped example sets and on crafted files. RPMEMCTL and RPMEM_EXAMPLES come from meson.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "process.h"
#include "temp_dir.h"

namespace {

namespace fs = std::filesystem;

using rpmem::test::required_environment;
using rpmem::test::RunResult;
using rpmem::test::TempDir;

// Runs rpmemctl with `args`.
RunResult rpmemctl(std::vector<std::string> args = {}) {
    args.insert(args.begin(), required_environment("RPMEMCTL"));
    return rpmem::test::run(args);
}

fs::path examples() {
    return required_environment("RPMEM_EXAMPLES");
}

// Checks with Python's json module that `text` is one valid JSON document, and returns the
// value of the Python expression `expression` over it (as `d`).
std::string json_eval(const std::string& text, const std::string& expression) {
    TempDir dir("rpmemctl-json");
    const fs::path file = dir.write("output.json", text);
    RunResult result = rpmem::test::run(
        {"python3", "-c",
         "import json,sys; d=json.load(open(sys.argv[1])); print(" + expression + ", end='')",
         file.string()});
    INFO(text << "\n" << result.err);
    REQUIRE(result.status == 0);
    return result.out;
}

} // namespace

TEST_CASE("every shipped example checks as its name says", "[rpmemctl]") {
    std::size_t valid = 0, invalid = 0;
    for (const auto& entry : fs::directory_iterator(examples())) {
        if (entry.path().extension() != ".set")
            continue;
        std::string file = entry.path().string();
        bool expect_valid = entry.path().filename().string().rfind("invalid", 0) != 0;
        INFO(entry.path());
        RunResult text = rpmemctl({"poolset", "check", file});
        CHECK(text.status == (expect_valid ? 0 : 1));
        RunResult json = rpmemctl({"poolset", "check", "--json", file});
        CHECK(json.status == text.status);
        CHECK(json_eval(json.out, "d['valid']") == (expect_valid ? "True" : "False"));
        (expect_valid ? valid : invalid) += 1;
    }
    CHECK(valid >= 5);
    CHECK(invalid >= 1);
}

TEST_CASE("text output shows replicas, parts, targets, options and net sizes", "[rpmemctl]") {
    RunResult remote = rpmemctl({"poolset", "check", (examples() / "remote-replica.set").string()});
    REQUIRE(remote.status == 0);
    CHECK_THAT(remote.output(), Catch::Contains("replica 1: remote"));
    CHECK_THAT(remote.output(), Catch::Contains("user: replicator, host: backup.example.com, "
                                                "port: 7636"));
    CHECK_THAT(remote.output(), Catch::Contains("remote set: pool.set"));
    CHECK_THAT(remote.output(), Catch::Contains("host: fd00::2, port: default"));
    CHECK_THAT(remote.output(), Catch::Contains("pool size: 64 MiB (67108864 bytes)"));

    RunResult multi = rpmemctl({"poolset", "check", (examples() / "multipart.set").string()});
    REQUIRE(multi.status == 0);
    CHECK_THAT(multi.output(), Catch::Contains("3 parts, 3 headers, net size 98296 KiB"));
    RunResult single = rpmemctl({"poolset", "check", (examples() / "singlehdr.set").string()});
    CHECK_THAT(single.output(), Catch::Contains("options: SINGLEHDR"));
    CHECK_THAT(single.output(), Catch::Contains("1 header, net size 48 MiB"));
}

TEST_CASE("JSON output carries the structure", "[rpmemctl]") {
    RunResult json =
        rpmemctl({"poolset", "check", "--json", (examples() / "remote-replica.set").string()});
    REQUIRE(json.status == 0);
    CHECK(json_eval(json.out, "d['pool_size']") == "67108864");
    CHECK(json_eval(json.out, "d['replicas'][1]['target']") ==
          "{'user': 'replicator', 'host': 'backup.example.com', 'port': 7636}");
    CHECK(json_eval(json.out, "d['replicas'][2]['target']['user']") == "None");
    CHECK(json_eval(json.out, "d['replicas'][0]['parts'][0]['size']") == "67108864");
    CHECK(json_eval(json.out, "d['options']") == "{'singlehdr': False, 'nohdrs': False}");
}

TEST_CASE("JSON strings are escaped", "[rpmemctl]") {
    TempDir dir("rpmemctl-test");
    const fs::path set = dir.write("pool.set", "PMEMPOOLSET\n8M /a\"b\\c\x01\xff\xc3\xa9\n");
    RunResult json = rpmemctl({"poolset", "check", "--json", set.string()});
    REQUIRE(json.status == 0);
    CHECK(json_eval(json.out, "ascii(d['replicas'][0]['parts'][0]['path'])") ==
          "'/a\"b\\\\c\\x01\\ufffd\\xe9'");
    const fs::path bad = dir.write("bad.set", "PMEMPOOLSET\n8M \"quoted\"\n");
    RunResult error = rpmemctl({"poolset", "check", "--json", bad.string()});
    CHECK(error.status == 1);
    CHECK_THAT(json_eval(error.out, "d['error']"),
               Catch::Contains("the part path '\"quoted\"' must be absolute"));
}

TEST_CASE("--target applies rpmemd's rules", "[rpmemctl]") {
    std::string replica = (examples() / "local-replica.set").string();
    CHECK(rpmemctl({"poolset", "check", replica}).status == 0);
    RunResult target = rpmemctl({"poolset", "check", "--target", replica});
    CHECK(target.status == 1);
    CHECK_THAT(target.output(), Catch::Contains("must not contain replicas"));
    TempDir dir("rpmemctl-test");
    const std::string nohdrs = dir.write("nohdrs.set", "PMEMPOOLSET\nOPTION NOHDRS\n2M /a\n");
    CHECK(rpmemctl({"poolset", "check", nohdrs}).status == 1);
    CHECK(rpmemctl({"poolset", "check", "--target", nohdrs}).status == 0);
}

TEST_CASE("usage errors exit with 2, unreadable files with 1", "[rpmemctl]") {
    std::string file = (examples() / "local.set").string();
    CHECK(rpmemctl().status == 2);
    CHECK(rpmemctl({"frobnicate"}).status == 2);
    CHECK(rpmemctl({"poolset"}).status == 2);
    CHECK(rpmemctl({"poolset", "list"}).status == 2);
    CHECK(rpmemctl({"poolset", "check"}).status == 2);
    CHECK(rpmemctl({"poolset", "check", file, file}).status == 2);
    RunResult unknown = rpmemctl({"poolset", "check", "--yaml", file});
    CHECK(unknown.status == 2);
    // The message names the command and the argument at fault, and where the usage is.
    CHECK_THAT(unknown.err, Catch::Contains("rpmemctl poolset check: ") &&
                                Catch::Contains("--yaml") &&
                                Catch::Contains("rpmemctl poolset check --help"));
    RunResult help = rpmemctl({"--help"});
    CHECK(help.status == 0);
    for (const char* command :
         {"init", "status", "events", "create", "info", "remove", "poolset", "verify"})
        CHECK_THAT(help.out, Catch::Contains(command));
    RunResult check_help = rpmemctl({"poolset", "check", "--help"});
    CHECK(check_help.status == 0);
    CHECK_THAT(check_help.out, Catch::Contains("--target") && Catch::Contains("FILE"));
    RunResult missing = rpmemctl({"poolset", "check", "/nonexistent/pool.set"});
    CHECK(missing.status == 1);
    CHECK_THAT(missing.output(), Catch::Contains("cannot open '/nonexistent/pool.set'"));
}
