// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl verify` on a pool Debian's unmodified libpmemobj replicated through our
// librpmem.so.1 to a real rpmemd: identical after 500 transactions and a clean close (the bytes
// libpmemobj keeps only in its mapping are reported apart, never as a difference), exactly the
// corrupted extent listed after a change to the target's data, the page after a change to the
// descriptor's persistent part, identical again after --repair (the target then equals the
// initiator beyond each side's own header, except those local-only bytes), and errors for what
// it cannot verify.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include "client/pmemobj_local_fields.h"
#include "compat_helpers.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

namespace {

void flip_byte(const fs::path& file, std::size_t offset) {
    std::fstream part(file, std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE(part);
    part.seekg(static_cast<std::streamoff>(offset));
    char byte = 0;
    part.get(byte);
    part.seekp(static_cast<std::streamoff>(offset));
    part.put(static_cast<char>(byte ^ 0x5a));
    REQUIRE(part);
}

// `a` and `b` equal from offset 4096 on, outside the local-only fields of the libpmemobj pool
// `local` (what libpmemobj never hands to librpmem); the number of bytes left out.
std::size_t equal_but_local_only(const std::string& local, const std::string& replica) {
    REQUIRE(local.size() == replica.size());
    const std::span<const std::byte> pool{reinterpret_cast<const std::byte*>(local.data()),
                                          local.size()};
    const auto fields = rpmem::client::PmemobjLocalFields::of(pool);
    REQUIRE(fields.is_pmemobj());
    std::string masked_local = local.substr(4096);
    std::string masked_replica = replica.substr(4096);
    std::size_t left_out = 0;
    for (const auto& field : fields.within({4096, local.size() - 4096})) {
        for (std::size_t at = field.range.offset; at < field.range.offset + field.range.length;
             ++at) {
            left_out += masked_local[at - 4096] != masked_replica[at - 4096] ? 1 : 0;
            masked_local[at - 4096] = masked_replica[at - 4096] = '\0';
        }
    }
    CHECK(masked_local == masked_replica);
    return left_out;
}

} // namespace

TEST_CASE("rpmemctl verify finds the one corrupted extent of a libpmemobj replica and repairs "
          "it") {
    TempDir scratch("rpmem-compat-verify-cwd");
    const WorkingDirectory here(scratch.path()); // rpmemd's and every tool's too
    OneRemoteReplica setup("rpmem-compat-verify");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    const EnvironmentChanges tool_environment = rpmemd.client_environment();

    create_pool(set, "500", environment);

    // libpmemobj keeps run-time state in its mapping of the pool that it never hands to
    // librpmem: the run-time part of the pool descriptor, chunk footers and the free-block
    // tree's entries. The local file holds them (the mapping is shared), the target does not;
    // the replica is still identical in everything libpmemobj replicates.
    REQUIRE(rpmemd.stop() == 0);
    const std::size_t local_only =
        equal_but_local_only(read_file(initiator_part(root)), read_file(target_part));
    CHECK(local_only > 0);
    rpmemd.restart();
    auto fresh = rpmemctl({"verify", set.string()}, tool_environment);
    INFO(fresh.output());
    CHECK(fresh.status == 0);
    CHECK_THAT(fresh.out, Catch::Contains("comparing 33550336 bytes from offset 4096 in extents "
                                          "of 1 MiB") &&
                              Catch::Contains("remote.set (line 3): identical\n") &&
                              Catch::Contains("  not compared: " + std::to_string(local_only) +
                                              " bytes that libpmemobj keeps only in its local "
                                              "mapping and never replicates (") &&
                              Catch::Contains("run-time part of the pool descriptor"));
    CHECK_THAT(fresh.out, !Catch::Contains("differs"));
    auto fresh_json = rpmemctl({"verify", set.string(), "--json"}, tool_environment);
    INFO(fresh_json.output());
    CHECK(fresh_json.status == 0);
    CHECK_THAT(
        fresh_json.out,
        Catch::Contains(R"("identical":true,"differences":[],"local_only":[{"offset":6688,)"
                        R"("length":1504,"field":"run-time part of the pool descriptor"})") &&
            Catch::Contains(R"("local_only_bytes":)" + std::to_string(local_only) + "}"));

    // --repair has nothing to repair on a healthy replica.
    auto synced = rpmemctl({"verify", set.string(), "--repair"}, tool_environment);
    INFO(synced.output());
    CHECK(synced.status == 0);
    CHECK_THAT(synced.out,
               Catch::Contains("remote.set (line 3): identical\n") && !Catch::Contains("rewrote"));

    // One byte of the descriptor's persistent part (nlanes, offset 4096 + 1024 + 8), in the
    // page that also holds its run-time part: that page, not its extent, and not hidden.
    flip_byte(target_part, 4096 + 1024 + 8);
    auto descriptor = rpmemctl({"verify", set.string()}, tool_environment);
    INFO(descriptor.output());
    CHECK(descriptor.status == 1);
    CHECK_THAT(descriptor.out, Catch::Contains("1 range differs (4096 bytes)") &&
                                   Catch::Contains("differs: offset 4096, length 4096\n"));
    auto descriptor_repaired = rpmemctl({"verify", set.string(), "--repair"}, tool_environment);
    INFO(descriptor_repaired.output());
    CHECK(descriptor_repaired.status == 0);
    CHECK_THAT(descriptor_repaired.out,
               Catch::Contains("rewrote 4096 bytes from the local pool; identical now"));

    // Corrupt two bytes of one 1 MiB extent of the target's part while no session has it: its
    // first 4 KiB extent and its last.
    flip_byte(target_part, (10 << 20) + 4096 + 123);
    flip_byte(target_part, (11 << 20) + 4095);
    auto found = rpmemctl({"verify", set.string()}, tool_environment);
    INFO(found.output());
    CHECK(found.status == 1);
    CHECK_THAT(found.out, Catch::Contains("1 range differs (1048576 bytes)") &&
                              Catch::Contains("differs: offset 10489856, length 1048576"));

    auto json =
        rpmemctl({"verify", set.string(), "--json", "--extent-size", "4K"}, tool_environment);
    INFO(json.output());
    CHECK(json.status == 1);
    CHECK_THAT(json.out, Catch::Contains(R"("extent_size":4096)") &&
                             Catch::Contains(R"("identical":false)") &&
                             Catch::Contains(R"("differences":[{"offset":10489856,"length":4096},)"
                                             R"({"offset":11534336,"length":4096}])"));

    auto repaired = rpmemctl({"verify", set.string(), "--repair"}, tool_environment);
    INFO(repaired.output());
    CHECK(repaired.status == 0);
    CHECK_THAT(repaired.out, Catch::Contains("rewrote 1048576 bytes from the local pool; "
                                             "identical now"));

    auto again = rpmemctl({"verify", set.string(), "--extent-size", "4K"}, tool_environment);
    INFO(again.output());
    CHECK(again.status == 0);
    REQUIRE(rpmemd.stop() == 0);
    const std::string initiator_bytes = read_file(initiator_part(root));
    const std::string target_bytes = read_file(target_part);
    REQUIRE(initiator_bytes.size() == target_bytes.size());
    (void)equal_but_local_only(initiator_bytes, target_bytes);
    CHECK(initiator_bytes.substr(0, 4096) != target_bytes.substr(0, 4096));

    // The repaired target is still a whole pool: libpmemobj opens it as the master replica and
    // finds every transaction.
    check_target_copy_verifies(root, target_part, "500", environment);
}

// Consistency on open after an unclean end (issue 31): the writer is killed mid-run, so the
// replica is left inconsistent, and bytes are changed in the local pool's free heap as persists
// that never reached the replica would be. The reopen must copy exactly the 4 KiB extents that
// really differ (those bytes, and whatever the killed writer had persisted only locally), not
// the extents that differ only in libpmemobj's local-only fields: the test computes that set
// itself from both files and compares it with what librpmem says it found and what it reported
// sending to rpmemd.
TEST_CASE("consistency on open after an unclean end copies only the extents that really differ") {
    TempDir scratch("rpmem-compat-reopen-cwd");
    const WorkingDirectory here(scratch.path());
    OneRemoteReplica setup("rpmem-compat-reopen");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    const EnvironmentChanges tool_environment = rpmemd.client_environment();
    const fs::path library_log = library_log_in(root, environment);
    environment["RPMEM_LOG_LEVEL"] = "info";

    create_pool(set, "100", environment);
    int output = -1;
    Process writer = spawn_writer(root, set, "100", "100000000", environment, output);
    const std::uint64_t committed =
        read_commits(output, 400, std::chrono::steady_clock::now() + std::chrono::seconds(60));
    REQUIRE(committed >= 400);
    CHECK(writer.stop(SIGKILL) == 128 + SIGKILL);
    ::close(output);
    REQUIRE(rpmemd.stop() == 0);

    // Two bytes in the free part of the heap, far from the objects, that the replica never got.
    constexpr std::size_t kExtent = 4096;
    std::string local = read_file(initiator_part(root));
    const std::string replica = read_file(target_part);
    REQUIRE(local.size() == replica.size());
    std::vector<std::size_t> changed;
    {
        const std::span<const std::byte> pool{reinterpret_cast<const std::byte*>(local.data()),
                                              local.size()};
        const auto fields = rpmem::client::PmemobjLocalFields::of(pool);
        REQUIRE(fields.is_pmemobj());
        for (std::size_t candidate : {std::size_t{20} << 20, std::size_t{27} << 20}) {
            std::size_t at = candidate + 100;
            while (!fields.within({at, 1}).empty())
                at += 64;
            changed.push_back(at);
        }
    }
    REQUIRE(changed.size() == 2);
    for (std::size_t at : changed)
        flip_byte(initiator_part(root), at);
    local = read_file(initiator_part(root));

    // What really differs: 4 KiB extents from offset 4096 with a byte that differs outside
    // the local-only fields of the local pool.
    std::size_t differing_bytes = 0;
    {
        const std::span<const std::byte> pool{reinterpret_cast<const std::byte*>(local.data()),
                                              local.size()};
        const auto fields = rpmem::client::PmemobjLocalFields::of(pool);
        std::size_t local_only_extents = 0;
        for (std::size_t extent = kExtent; extent < local.size(); extent += kExtent) {
            if (local.compare(extent, kExtent, replica, extent, kExtent) == 0)
                continue;
            std::vector<bool> excluded(kExtent, false);
            for (const auto& field : fields.within({extent, kExtent}))
                for (std::size_t at = std::max(field.range.offset, extent);
                     at < std::min(field.range.offset + field.range.length, extent + kExtent); ++at)
                    excluded[at - extent] = true;
            bool real = false;
            for (std::size_t i = 0; i < kExtent && !real; ++i)
                real = !excluded[i] && local[extent + i] != replica[extent + i];
            if (real)
                differing_bytes += kExtent;
            else
                ++local_only_extents;
        }
        INFO("extents differing only in local-only fields: " << local_only_extents);
        CHECK(local_only_extents > 0); // else this test could not tell the rule from none
    }
    CHECK(differing_bytes >= 2 * kExtent);
    CHECK(differing_bytes < 64 * kExtent);

    rpmemd.restart();
    auto reopened = obj_tx({"verify", set.string(), "any"}, environment);
    INFO(reopened.output());
    REQUIRE(reopened.status == 0);
    const std::string lines = read_file(library_log);
    INFO("librpmem's log:\n" << lines);
    CHECK_THAT(lines,
               Catch::Contains("the replica was inconsistent; " + std::to_string(differing_bytes) +
                               " of " + std::to_string(local.size() - 4096) +
                               " bytes differ from the local pool"));

    // rpmemd's account of the resync: the bytes the initiator sent.
    auto events = rpmemctl({"events", rpmemd.target(), "--history", "--once"}, tool_environment);
    INFO(events.output());
    REQUIRE(events.status == 0);
    const auto at = events.out.rfind(R"("kind":"resync_finished")");
    REQUIRE(at != std::string::npos);
    const std::string line = events.out.substr(at, events.out.find('\n', at) - at);
    CHECK_THAT(line, Catch::Contains(R"("done_bytes":)" + std::to_string(differing_bytes)));

    // And the pair is identical again.
    auto verified = rpmemctl({"verify", set.string()}, tool_environment);
    INFO(verified.output());
    CHECK(verified.status == 0);
}

TEST_CASE("rpmemctl verify: errors name the file and line, the pool or the replica") {
    TempDir scratch("rpmem-compat-verify-cwd");
    const WorkingDirectory here(scratch.path()); // rpmemd's and every tool's too
    OneRemoteReplica setup("rpmem-compat-verify-errors");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    const EnvironmentChanges tool_environment = rpmemd.client_environment();

    const fs::path malformed =
        write_file(root / "initiator" / "malformed.set",
                   "PMEMPOOLSET\n32M " + initiator_part(root).string() + "\nREPLICA\nthirty-two " +
                       target_part.string() + "\n");
    auto bad_set = rpmemctl({"verify", malformed.string()}, tool_environment);
    INFO(bad_set.output());
    CHECK(bad_set.status == 2);
    CHECK_THAT(bad_set.err, Catch::Contains(malformed.string() + ":4:"));

    auto bad_json = rpmemctl({"verify", malformed.string(), "--json"}, tool_environment);
    CHECK(bad_json.status == 2);
    CHECK_THAT(bad_json.out, Catch::Contains(R"("error":")") && Catch::Contains(":4:"));

    // The local pool does not exist yet.
    auto no_pool = rpmemctl({"verify", set.string()}, tool_environment);
    INFO(no_pool.output());
    CHECK(no_pool.status == 2);
    CHECK_THAT(no_pool.err, Catch::Contains("mapping the local pool of " + set.string()));

    // A set without remote replicas has nothing to verify.
    const fs::path local_only =
        write_file(root / "initiator" / "local.set",
                   "PMEMPOOLSET\n32M " + initiator_part(root).string() + "\n");
    auto nothing = rpmemctl({"verify", local_only.string()}, tool_environment);
    CHECK(nothing.status == 2);
    CHECK_THAT(nothing.err, Catch::Contains("no REPLICA line names a remote replica"));

    // The replica is missing on the target: the error names it.
    create_pool(set, "10", environment);
    REQUIRE(std::filesystem::remove(target_part));
    auto gone = rpmemctl({"verify", set.string()}, tool_environment);
    INFO(gone.output());
    CHECK(gone.status == 2);
    CHECK_THAT(gone.out, Catch::Contains("replica " + rpmemd.target() +
                                         " remote.set (line 3): "
                                         "error: "));

    // Usage errors.
    CHECK(rpmemctl({"verify"}, tool_environment).status == 2);
    auto odd = rpmemctl({"verify", set.string(), "--extent-size", "3000"}, tool_environment);
    CHECK(odd.status == 2);
    CHECK_THAT(odd.err, Catch::Contains("--extent-size: 3000 is not a power of two"));
}
