// SPDX-License-Identifier: BSD-3-Clause
// Proven direction with Debian's unmodified libpmemobj and pmempool (issue 24): nothing a lost or
// stale local pool does may change its replica, the last good copy.
//  - The device of the initiator's part is replaced (all zeros) after the application was
//    killed: opening the set and `rpmemctl verify --repair` leave every byte of the replica as
//    it was; Debian's `pmempool sync`, or `rpmemctl restore`, then rebuilds the local pool from
//    the replica (still unchanged), libpmemobj finds every acknowledged transaction in it, and
//    the replica is consistent with it.
//  - A local pool restored from an older backup is refused at open, both runs named, and the
//    replica keeps its newer data; `rpmemctl restore` then brings the newer data back.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "compat_helpers.h"

using namespace rpmem::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

void zero_file(const fs::path& file) {
    const auto size = fs::file_size(file);
    fs::remove(file);
    std::ofstream blank(file, std::ios::binary);
    blank.seekp(static_cast<std::streamoff>(size - 1));
    blank.put('\0');
    REQUIRE(blank);
}

} // namespace

TEST_CASE("a blank replaced local device never overwrites the replica; pmempool sync or "
          "rpmemctl restore brings every transaction back") {
    const std::string tool = GENERATE(as<std::string>{}, "pmempool sync", "rpmemctl restore");
    INFO("rebuilt with " << tool);
    TempDir scratch("rpmem-compat-direction-cwd");
    const WorkingDirectory here(scratch.path());
    OneRemoteReplica setup("rpmem-compat-direction");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    const fs::path library_log = library_log_in(root, environment);
    const EnvironmentChanges tool_environment = rpmemd.client_environment();

    create_pool(set, "1", environment);
    int output = -1;
    Process writer = spawn_writer(root, set, "1", "100000000", environment, output);
    const std::uint64_t committed =
        read_commits(output, 300, std::chrono::steady_clock::now() + 120s);
    REQUIRE(committed >= 300);
    writer.signal(SIGKILL);
    (void)writer.wait_for(10s);
    ::close(output);
    // The daemon releases the killed session's pool (inconsistent) before the next step.
    rpmemd.restart();

    const std::string replica = read_file(target_part);
    zero_file(initiator_part(root));

    // libpmemobj's open of the set hands librpmem the blank local part: left as it is.
    auto opened = obj_tx({"verify", set.string(), "any"}, environment);
    INFO(opened.output());
    CHECK(opened.status != 0);
    CHECK(read_file(target_part) == replica);
    CHECK_THAT(read_file(library_log), Catch::Contains("not repaired from the local pool"));

    // verify finds everything different, and --repair refuses to copy a blank pool over it.
    auto repaired = rpmemctl({"verify", set.string(), "--repair"}, tool_environment);
    INFO(repaired.output());
    CHECK(repaired.status == 2);
    CHECK_THAT(repaired.output(),
               Catch::Contains("not repairing replica") && Catch::Contains("rpmemctl restore"));
    CHECK(read_file(target_part) == replica);

    if (tool == "pmempool sync") {
        // libpmempool finds the local part broken, recreates it and reads the data from the
        // healthy remote replica (rpmem_read); librpmem proves nothing and writes nothing.
        auto synced = pmempool({"sync", set.string()}, environment);
        INFO(synced.output());
        CHECK(synced.status == 0);
    } else {
        auto restored = rpmemctl({"restore", set.string()}, tool_environment);
        INFO(restored.output());
        REQUIRE(restored.status == 0);
        CHECK_THAT(restored.out,
                   Catch::Contains("the replica is consistent with the restored pool"));
    }
    CHECK(read_file(target_part).substr(4096) == replica.substr(4096));

    // Debian's libpmemobj opens the rebuilt set (through its REPLICA line) and finds at least
    // every transaction the writer saw committed, all of them intact.
    auto reopened = obj_tx({"verify", set.string(), "any"}, environment);
    INFO(reopened.output());
    REQUIRE(reopened.status == 0);
    CHECK(verified_count(reopened) >= committed);
    auto info = rpmemctl({"info", rpmemd.target(), "remote.set", "--json"}, tool_environment);
    INFO(info.output());
    CHECK_THAT(info.out, Catch::Contains(R"("state":"consistent")"));

    REQUIRE(rpmemd.stop() == 0);
    check_target_copy_verifies(root, target_part, "any", environment);
}

TEST_CASE("a local pool restored from an older backup is refused, both runs named") {
    TempDir scratch("rpmem-compat-backup-cwd");
    const WorkingDirectory here(scratch.path());
    OneRemoteReplica setup("rpmem-compat-backup");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    const fs::path library_log = library_log_in(root, environment);
    const EnvironmentChanges tool_environment = rpmemd.client_environment();

    create_pool(set, "100", environment);
    const fs::path backup = root / "backup.part";
    fs::copy_file(initiator_part(root), backup);
    auto more = obj_tx({"run", set.string(), "100", "100"}, environment);
    INFO(more.output());
    REQUIRE(more.status == 0);
    const std::string replica = read_file(target_part);

    fs::copy_file(backup, initiator_part(root), fs::copy_options::overwrite_existing);
    auto opened = obj_tx({"verify", set.string(), "any"}, environment);
    INFO(opened.output());
    CHECK(opened.status != 0);
    const std::string log = read_file(library_log);
    INFO(log);
    // Each open adds 2 to libpmemobj's run id: the backup was taken after the create (run 2),
    // the replica saw one more open (run 4).
    CHECK_THAT(log, Catch::Contains("the local pool is older than the replica") &&
                        Catch::Contains("libpmemobj run 2 here, run 4 on the replica"));
    CHECK(read_file(target_part) == replica);

    // The replica's newer data comes back with restore (the local pool is valid but older: no
    // --force needed), and libpmemobj finds all 200 transactions.
    auto restored = rpmemctl({"restore", set.string()}, tool_environment);
    INFO(restored.output());
    REQUIRE(restored.status == 0);
    auto reopened = obj_tx({"verify", set.string(), "200"}, environment);
    INFO(reopened.output());
    CHECK(reopened.status == 0);
    // A valid local pool at the replica's run is not restored over without --force.
    auto refused = rpmemctl({"restore", set.string()}, tool_environment);
    INFO(refused.output());
    CHECK(refused.status != 0);
    CHECK_THAT(refused.err, Catch::Contains("--force"));
}
