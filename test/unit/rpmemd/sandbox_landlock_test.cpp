// SPDX-License-Identifier: BSD-3-Clause
// The worker sandbox's file system layer, Landlock, in forked children: reading beneath a
// read-only path and nothing else, and (with the system call filter off, so that Landlock alone
// answers) no writing, making, removing or executing. Needs a kernel with Landlock enabled;
// elsewhere meson reports the test skipped (the sandbox then runs without this layer, which
// rpmemd logs).
#include <cerrno>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "precondition.h"
#include "rpmemd/worker/sandbox.h"
#include "sandbox_test_support.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;
using namespace rpmem::test;

std::optional<std::string> rpmem::test::missing_precondition() {
    const long abi =
        ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        return std::string("needs Landlock: ") + std::strerror(errno);
    return std::nullopt;
}

namespace {

// The sandbox must have applied Landlock: this kernel has it.
std::string landlock_applied(const SandboxReport& report) {
    return report.landlock_abi > 0 ? "" : "entered without Landlock: " + report.landlock_note;
}

} // namespace

TEST_CASE("a file beneath a read-only path reads, one outside does not open",
          "[sandbox][landlock]") {
    TempDir allowed;
    TempDir outside;
    const std::string inside_file = allowed.write("sub/part", "pool bytes");
    const std::string outside_file = outside.write("secret", "not yours");
    const bool filter = GENERATE(true, false);
    SandboxOptions options;
    options.read_only_paths = {allowed.path().string()};
    options.filter_system_calls = filter;
    expect_success(run_sandboxed(options, [&](const SandboxReport& report) -> std::string {
        RETURN_IF(landlock_applied(report));
        std::string text;
        RETURN_IF(read_file(inside_file, text));
        if (text != "pool bytes")
            return "read '" + text + "' from " + inside_file;
        RETURN_IF(expect_errno("opening a file outside the read-only paths",
                               ::open(outside_file.c_str(), O_RDONLY | O_CLOEXEC), EACCES));
        RETURN_IF(expect_errno("opening /etc/passwd", ::open("/etc/passwd", O_RDONLY), EACCES));
        return "";
    }));
}

TEST_CASE("a single read-only file may be named", "[sandbox][landlock]") {
    TempDir dir;
    const std::string file = dir.write("only", "just this");
    const std::string sibling = dir.write("other", "not this");
    SandboxOptions options;
    options.read_only_paths = {file};
    expect_success(run_sandboxed(options, [&](const SandboxReport& report) -> std::string {
        RETURN_IF(landlock_applied(report));
        std::string text;
        RETURN_IF(read_file(file, text));
        return expect_errno("opening a sibling", ::open(sibling.c_str(), O_RDONLY), EACCES);
    }));
}

TEST_CASE("nothing can be written, made or removed: Landlock alone says EACCES",
          "[sandbox][landlock]") {
    TempDir allowed;
    const std::string file = allowed.write("part", "pool bytes");
    SandboxOptions options;
    options.read_only_paths = {allowed.path().string()};
    options.filter_system_calls = false;
    expect_success(run_sandboxed(options, [&](const SandboxReport& report) -> std::string {
        RETURN_IF(landlock_applied(report));
        RETURN_IF(expect_errno("opening for writing", ::open(file.c_str(), O_WRONLY), EACCES));
        RETURN_IF(expect_errno(
            "creating", ::open((allowed / "new").c_str(), O_WRONLY | O_CREAT, 0600), EACCES));
        RETURN_IF(expect_errno("truncating", ::truncate(file.c_str(), 0), EACCES));
        RETURN_IF(expect_errno("mkdir", ::mkdir((allowed / "dir").c_str(), 0700), EACCES));
        RETURN_IF(expect_errno("unlink", ::unlink(file.c_str()), EACCES));
        RETURN_IF(expect_errno("mkdir in /tmp", ::mkdir("/tmp/rpmem-sandbox-x", 0700), EACCES));
        return "";
    }));
    // The file is untouched.
    CHECK(allowed.read("part") == "pool bytes");
}

TEST_CASE("Landlock alone refuses executing a program", "[sandbox][landlock]") {
    SandboxOptions options;
    options.read_only_paths = {"/usr", "/bin"};
    options.filter_system_calls = false;
    expect_success(run_sandboxed(options, [](const SandboxReport& report) -> std::string {
        RETURN_IF(landlock_applied(report));
        char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
        return expect_errno("execve", ::execve("/bin/true", argv, environ), EACCES);
    }));
}
