// SPDX-License-Identifier: BSD-3-Clause
// Killing rpmemd under a running libpmemobj application, with no failure policy set and with
// on-replica-failure = abort: the next persist fails within the configured timeout and librpmem
// aborts the process cleanly, saying why (libpmemobj's own error path would crash with SIGSEGV),
// instead of hanging; every transaction the application saw committed is on the target's disk.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include "compat_helpers.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

TEST_CASE("rpmemd killed mid-run: the application stops cleanly, acknowledged data is durable") {
    const std::string policy = GENERATE(as<std::string>{}, "", "abort");
    INFO("on-replica-failure: " << (policy.empty() ? "(not set)" : policy));
    OneRemoteReplica setup("rpmem-compat-crash");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    // librpmem's log in a file instead of the system log: the reason must reach it too.
    const fs::path library_log = library_log_in(root, environment);
    if (!policy.empty())
        environment["RPMEM_ON_REPLICA_FAILURE"] = policy;

    create_pool(set, "1", environment);

    int output = -1;
    Process writer = spawn_writer(root, set, "1", "100000000", environment, output);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::uint64_t committed = 0;
    while (committed < 200) {
        auto line = read_line(output, deadline);
        REQUIRE(line);
        REQUIRE(line->rfind("committed ", 0) == 0);
        committed = std::stoull(line->substr(10));
    }

    rpmemd.kill(SIGKILL);
    const auto killed = std::chrono::steady_clock::now();
    // The writer may print a few more commits that were acknowledged before the kill.
    while (auto line = read_line(output, killed + std::chrono::seconds(8)))
        if (line->rfind("committed ", 0) == 0)
            committed = std::stoull(line->substr(10));
    ::close(output);
    auto status = writer.wait_for(std::chrono::seconds(8));
    REQUIRE(status); // no hang: RPMEM_TIMEOUT is 5 s
    const auto took = std::chrono::steady_clock::now() - killed;
    INFO(
        "writer exited with " << *status << " after "
                              << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                              << " ms:\n"
                              << read_file(root / "writer.log"));
    // librpmem aborts before libpmemobj's clean-up can crash: SIGABRT, never SIGSEGV (which
    // Debian's libfabric turns into exit status 1), and the reason on stderr, naming the
    // target and the step (libpmemobj never shows rpmem_errormsg()).
    CHECK(*status == 128 + SIGABRT);
    CHECK(took < std::chrono::seconds(6));
    const std::string log = read_file(root / "writer.log");
    CHECK_THAT(log, Catch::Contains("Connection reset by peer"));
    CHECK_THAT(log, Catch::Contains("rpmem_persist failed") &&
                        Catch::Contains(rpmemd.target() + " pool set remote.set") &&
                        Catch::Contains("aborting the process"));
    CHECK_THAT(log, !Catch::Contains("Segmentation"));
    // stderr has that one line of librpmem's; its log has the break and the abort.
    CHECK_THAT(log, !Catch::Contains("[rpmem.client]"));
    const std::string library_lines = read_file(library_log);
    INFO("librpmem's log:\n" << library_lines);
    CHECK_THAT(library_lines,
               Catch::Contains("is broken") && Catch::Contains("aborting the process"));

    // The target's file alone holds at least every acknowledged transaction.
    auto verified = verify_target_copy(root, target_part, "any", environment);
    INFO(verified.output());
    REQUIRE(verified.status == 0);
    CHECK(verified_count(verified) >= committed);
}

TEST_CASE("rpmemd not running: creating and opening a replicated pool fail, saying why") {
    OneRemoteReplica setup("rpmem-compat-down");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    environment.erase("RPMEM_LOG_LEVEL");
    const fs::path library_log = library_log_in(root, environment);

    create_pool(set, "1", environment);
    REQUIRE(rpmemd.stop() == 0);

    // libpmemobj itself only says "remote replica #1 failed"; librpmem's log line names the
    // target and the cause, and stays off the application's stderr. A plain failure, not a
    // crash.
    for (const char* command : {"verify", "create"}) {
        if (std::string(command) == "create")
            fs::remove(initiator_part(root));
        auto failed = obj_tx({command, set.string(), "1"}, environment);
        INFO(command << ": " << failed.output());
        CHECK(failed.status == 1);
        CHECK_THAT(failed.output(), !Catch::Contains("[rpmem.client]"));
        CHECK_THAT(read_file(library_log),
                   Catch::Contains(rpmemd.target()) && Catch::Contains("Connection refused"));
    }
}
