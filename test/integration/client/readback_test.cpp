// SPDX-License-Identifier: BSD-3-Clause
// A raw librpmem program (its pool a buffer of its own, as PMDK's hello example) killed while it
// persists, then reopened with an empty buffer: the reopen must leave the replica as it is (the
// buffer proves nothing about being its master), and rpmem_read must give back every record the
// program saw acknowledged (DESIGN.md, invariant 7). The target's bytes are checked too.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "process.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

using namespace rpmem::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kDataOffset = 4096;
constexpr std::size_t kSlotBytes = 4096 * 64;

std::uint64_t field(const std::string& output, const std::string& name) {
    const auto at = output.find(name + " ");
    REQUIRE(at != std::string::npos);
    return std::stoull(output.substr(at + name.size() + 1));
}

} // namespace

TEST_CASE("a raw librpmem program killed mid-run reads its persisted records back after a "
          "reopen with an empty buffer") {
    const std::string how = GENERATE(as<std::string>{}, "writer killed", "target stopped first");
    INFO(how);
    TempDir root("rpmem-readback");
    TempDir scratch("rpmem-readback-cwd");
    const WorkingDirectory here(scratch.path()); // where libfabric drops its crash files
    RpmemdInstance rpmemd(root);
    const fs::path part = root / "raw.part";
    rpmemd.write_pool_set("raw.set", "PMEMPOOLSET\n16M " + part.string() + "\n");
    EnvironmentChanges environment = rpmemd.client_environment();
    environment["RPMEM_LOG_FILE"] = (root / "librpmem.log").string();
    environment["RPMEM_TIMEOUT"] = "2000";
    const std::string guest = required_environment("READBACK_GUEST");

    int output = -1;
    Process writer = Process::spawn_piped({guest, "write", rpmemd.target(), "raw.set"}, environment,
                                          output, root / "writer.log", scratch.path());
    std::uint64_t acknowledged = 0;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (acknowledged < 6000) {
        auto line = read_line(output, deadline);
        INFO(read_text(root / "writer.log"));
        REQUIRE(line);
        REQUIRE(line->rfind("ok ", 0) == 0);
        acknowledged = std::stoull(line->substr(3));
    }
    if (how == "target stopped first") {
        // The target stops answering (as a partition would look): the writer's next persist
        // hangs; it is then killed, never having seen it acknowledged.
        rpmemd.kill(SIGSTOP);
        while (auto line = read_line(output, std::chrono::steady_clock::now() + 500ms))
            acknowledged = std::stoull(line->substr(3));
        writer.signal(SIGKILL);
        (void)writer.wait_for(10s);
        rpmemd.kill(SIGCONT);
    } else {
        writer.signal(SIGKILL);
        (void)writer.wait_for(10s);
        while (auto line = read_line(output, std::chrono::steady_clock::now() + 200ms))
            acknowledged = std::stoull(line->substr(3));
    }
    ::close(output);

    const std::string before = read_text(part);
    REQUIRE(before.size() > kDataOffset + kSlotBytes);
    auto reader = run({guest, "read", rpmemd.target(), "raw.set"}, environment, 60s);
    INFO(reader.output());
    INFO(read_text(root / "librpmem.log"));
    REQUIRE(reader.status == 0);
    CHECK(field(reader.out, "max") >= acknowledged);
    CHECK(field(reader.out, "LOST") == 0);
    // The reopen with an empty buffer wrote nothing onto the replica.
    const std::string after = read_text(part);
    CHECK(after.substr(kDataOffset) == before.substr(kDataOffset));
    CHECK_THAT(read_text(root / "librpmem.log"),
               Catch::Contains("not repaired from the local pool") &&
                   Catch::Contains("header is blank"));

    // Still not repaired, and still readable, on the next reopen too.
    auto again = run({guest, "read", rpmemd.target(), "raw.set"}, environment, 60s);
    INFO(again.output());
    REQUIRE(again.status == 0);
    CHECK(field(again.out, "LOST") == 0);
    CHECK(read_text(part).substr(kDataOffset) == before.substr(kDataOffset));
}
