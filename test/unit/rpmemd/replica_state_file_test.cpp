// SPDX-License-Identifier: BSD-3-Clause
// The replica state file: its text form, its crash-safe replacement, bad files named.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <fcntl.h>

#include "rpmemd/supervisor/replica_state_file.h"
#include "temp_dir.h"

using rpmem::daemon::parse_replica_record;
using rpmem::daemon::ReplicaRecord;
using rpmem::daemon::ReplicaStateFile;
using rpmem::protocol::ReplicaState;
namespace fs = std::filesystem;

namespace {
ReplicaStateFile state_file_in(const fs::path& dir) {
    return ReplicaStateFile(rpmem::UniqueFd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
                            "pool.set", (dir / "pool.set").string());
}
} // namespace

TEST_CASE("a record survives its text form") {
    for (auto state : {ReplicaState::consistent, ReplicaState::inconsistent, ReplicaState::outdated,
                       ReplicaState::promoted}) {
        ReplicaRecord record{state, 42};
        auto parsed = parse_replica_record(rpmem::daemon::format_replica_record(record), "f");
        REQUIRE(parsed);
        CHECK(*parsed == record);
    }
}

TEST_CASE("bad state files are refused, naming the file and the line") {
    struct Case {
        const char* text;
        const char* says;
    } cases[] = {
        {"state = consistent\n", "f: needs both"},
        {"state = fine\ngeneration = 1\n", "f:1: unknown state 'fine'"},
        {"state = consistent\ngeneration = 0\n", "f:2: generation '0'"},
        {"state = consistent\ngeneration = 12x\n", "f:2: generation '12x'"},
        {"# comment\n\nstate consistent\n", "f:3: expected 'key = value'"},
        {"colour = blue\n", "f:1: unknown key 'colour'"},
    };
    for (const auto& c : cases) {
        INFO(c.text);
        auto parsed = parse_replica_record(c.text, "f");
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message(), Catch::Contains(c.says));
    }
}

TEST_CASE("the state file: missing, written, replaced, removed") {
    rpmem::test::TempDir dir("rpmem-state-file");
    auto file = state_file_in(dir.path());
    CHECK(file.path() == (dir.path() / "pool.set.rpmem-state").string());

    auto missing = file.read();
    REQUIRE(missing);
    CHECK_FALSE(missing->has_value());

    REQUIRE(file.write({ReplicaState::inconsistent, 1}));
    REQUIRE(file.write({ReplicaState::consistent, 3}));
    auto read = file.read();
    REQUIRE(read);
    REQUIRE(read->has_value());
    CHECK(**read == ReplicaRecord{ReplicaState::consistent, 3});
    // The replacement leaves no temporary behind.
    CHECK_FALSE(fs::exists(dir.path() / "pool.set.rpmem-state.new"));
    CHECK((fs::status(file.path()).permissions() & fs::perms::others_read) == fs::perms::none);

    REQUIRE(file.remove());
    REQUIRE(file.remove()); // already gone: fine
    CHECK_FALSE(fs::exists(file.path()));
}

TEST_CASE("a damaged state file fails the read with its path and line") {
    rpmem::test::TempDir dir("rpmem-state-file");
    std::ofstream(dir.path() / "pool.set.rpmem-state") << "state = maybe\ngeneration = 1\n";
    auto read = state_file_in(dir.path()).read();
    REQUIRE_FALSE(read);
    CHECK_THAT(read.error().message(),
               Catch::Contains("pool.set.rpmem-state:1: unknown state 'maybe'"));
}
