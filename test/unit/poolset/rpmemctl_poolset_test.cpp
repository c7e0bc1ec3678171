// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl poolset check`, run as a program: exit statuses, text and JSON output on the
// shipped example sets and on crafted files. RPMEMCTL and RPMEM_EXAMPLES come from meson.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

struct Run {
    int status;
    std::string output;
};

std::string shell_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

Run run(const std::string& command) {
    Run result{-1, {}};
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    std::size_t got;
    while ((got = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
        result.output.append(buffer, got);
    int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

std::string rpmemctl() {
    const char* path = std::getenv("RPMEMCTL");
    REQUIRE(path != nullptr);
    return shell_quote(path);
}

fs::path examples() {
    const char* path = std::getenv("RPMEM_EXAMPLES");
    REQUIRE(path != nullptr);
    return path;
}

// Checks with Python's json module that `text` is one valid JSON document, and returns the
// value of the Python expression `expression` over it (as `d`).
std::string json_eval(const std::string& text, const std::string& expression) {
    fs::path file = fs::temp_directory_path() / ("rpmemctl-json-" + std::to_string(getpid()));
    std::ofstream(file, std::ios::binary) << text;
    Run result = run("python3 -c " +
                     shell_quote("import json,sys; d=json.load(open(sys.argv[1])); print(" +
                                 expression + ", end='')") +
                     " " + shell_quote(file.string()));
    fs::remove(file);
    INFO(text);
    REQUIRE(result.status == 0);
    return result.output;
}

struct TempFile {
    explicit TempFile(const std::string& text) {
        path = fs::temp_directory_path() / ("rpmemctl-test-" + std::to_string(getpid()) + ".set");
        std::ofstream(path, std::ios::binary) << text;
    }
    ~TempFile() {
        std::error_code ignored;
        fs::remove(path, ignored);
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    fs::path path;
};

} // namespace

TEST_CASE("every shipped example checks as its name says", "[rpmemctl]") {
    std::size_t valid = 0, invalid = 0;
    for (const auto& entry : fs::directory_iterator(examples())) {
        if (entry.path().extension() != ".set")
            continue;
        std::string file = shell_quote(entry.path().string());
        bool expect_valid = entry.path().filename().string().rfind("invalid", 0) != 0;
        INFO(entry.path());
        Run text = run(rpmemctl() + " poolset check " + file);
        CHECK(text.status == (expect_valid ? 0 : 1));
        Run json = run(rpmemctl() + " poolset check --json " + file);
        CHECK(json.status == text.status);
        CHECK(json_eval(json.output, "d['valid']") == (expect_valid ? "True" : "False"));
        (expect_valid ? valid : invalid) += 1;
    }
    CHECK(valid >= 5);
    CHECK(invalid >= 1);
}

TEST_CASE("text output shows replicas, parts, targets, options and net sizes", "[rpmemctl]") {
    Run remote = run(rpmemctl() + " poolset check " +
                     shell_quote((examples() / "remote-replica.set").string()));
    REQUIRE(remote.status == 0);
    CHECK_THAT(remote.output, Catch::Contains("replica 1: remote"));
    CHECK_THAT(remote.output, Catch::Contains("user: replicator, host: backup.example.com, "
                                              "port: 7636"));
    CHECK_THAT(remote.output, Catch::Contains("remote set: pool.set"));
    CHECK_THAT(remote.output, Catch::Contains("host: fd00::2, port: default"));
    CHECK_THAT(remote.output, Catch::Contains("pool size: 64 MiB (67108864 bytes)"));

    Run multi =
        run(rpmemctl() + " poolset check " + shell_quote((examples() / "multipart.set").string()));
    REQUIRE(multi.status == 0);
    CHECK_THAT(multi.output, Catch::Contains("3 parts, 3 headers, net size 98296 KiB"));
    Run single =
        run(rpmemctl() + " poolset check " + shell_quote((examples() / "singlehdr.set").string()));
    CHECK_THAT(single.output, Catch::Contains("options: SINGLEHDR"));
    CHECK_THAT(single.output, Catch::Contains("1 header, net size 48 MiB"));
}

TEST_CASE("JSON output carries the structure", "[rpmemctl]") {
    Run json = run(rpmemctl() + " poolset check --json " +
                   shell_quote((examples() / "remote-replica.set").string()));
    REQUIRE(json.status == 0);
    CHECK(json_eval(json.output, "d['pool_size']") == "67108864");
    CHECK(json_eval(json.output, "d['replicas'][1]['target']") ==
          "{'user': 'replicator', 'host': 'backup.example.com', 'port': 7636}");
    CHECK(json_eval(json.output, "d['replicas'][2]['target']['user']") == "None");
    CHECK(json_eval(json.output, "d['replicas'][0]['parts'][0]['size']") == "67108864");
    CHECK(json_eval(json.output, "d['options']") == "{'singlehdr': False, 'nohdrs': False}");
}

TEST_CASE("JSON strings are escaped", "[rpmemctl]") {
    TempFile set("PMEMPOOLSET\n8M /a\"b\\c\x01\xff\xc3\xa9\n");
    Run json = run(rpmemctl() + " poolset check --json " + shell_quote(set.path.string()));
    REQUIRE(json.status == 0);
    CHECK(json_eval(json.output, "ascii(d['replicas'][0]['parts'][0]['path'])") ==
          "'/a\"b\\\\c\\x01\\ufffd\\xe9'");
    TempFile bad("PMEMPOOLSET\n8M \"quoted\"\n");
    Run error = run(rpmemctl() + " poolset check --json " + shell_quote(bad.path.string()));
    CHECK(error.status == 1);
    CHECK_THAT(json_eval(error.output, "d['error']"),
               Catch::Contains("the part path '\"quoted\"' must be absolute"));
}

TEST_CASE("--target applies rpmemd's rules", "[rpmemctl]") {
    std::string replica = shell_quote((examples() / "local-replica.set").string());
    CHECK(run(rpmemctl() + " poolset check " + replica).status == 0);
    Run target = run(rpmemctl() + " poolset check --target " + replica);
    CHECK(target.status == 1);
    CHECK_THAT(target.output, Catch::Contains("must not contain replicas"));
    TempFile nohdrs("PMEMPOOLSET\nOPTION NOHDRS\n2M /a\n");
    CHECK(run(rpmemctl() + " poolset check " + shell_quote(nohdrs.path.string())).status == 1);
    CHECK(run(rpmemctl() + " poolset check --target " + shell_quote(nohdrs.path.string())).status ==
          0);
}

TEST_CASE("usage errors exit with 2, unreadable files with 1", "[rpmemctl]") {
    std::string file = shell_quote((examples() / "local.set").string());
    CHECK(run(rpmemctl()).status == 2);
    CHECK(run(rpmemctl() + " frobnicate").status == 2);
    CHECK(run(rpmemctl() + " poolset").status == 2);
    CHECK(run(rpmemctl() + " poolset list").status == 2);
    CHECK(run(rpmemctl() + " poolset check").status == 2);
    CHECK(run(rpmemctl() + " poolset check " + file + " " + file).status == 2);
    CHECK(run(rpmemctl() + " poolset check --yaml " + file).status == 2);
    CHECK(run(rpmemctl() + " --help").status == 0);
    CHECK(run(rpmemctl() + " poolset check --help").status == 0);
    Run missing = run(rpmemctl() + " poolset check /nonexistent/pool.set");
    CHECK(missing.status == 1);
    CHECK_THAT(missing.output, Catch::Contains("cannot open '/nonexistent/pool.set'"));
}
