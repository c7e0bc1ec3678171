// SPDX-License-Identifier: BSD-3-Clause
// Failover with Debian's unmodified libpmemobj (issue 12's acceptance, on one machine: "host A"
// and "host B" are two directories and two rpmemd processes on 127.0.0.1). libpmemobj on A
// replicates to rpmemd on B through a REPLICA line; A is killed -9 mid-run; `rpmemctl promote`
// on B; libpmemobj opens B's own pool set file locally and sees every acknowledged transaction;
// A, coming back with its old pool set, is refused with a split-brain message and B's copy is
// unchanged byte for byte; a promote of a replica that is not consistent is refused without
// --force; `rpmemctl rejoin` makes A's pool a replica of B, B's next open resyncs it, and the
// pair passes `pmempool check`; promoted in turn, A holds B's post-promote transactions.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include "compat_helpers.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

namespace {

std::uint64_t verified_count(const RunResult& result) {
    const auto at = result.out.find("verified ");
    REQUIRE(at != std::string::npos);
    return std::stoull(result.out.substr(at + 9));
}

std::string set_text(const fs::path& part, const std::string& replica_line = "") {
    return "PMEMPOOLSET\n" + std::string(kPoolSize) + " " + part.string() + "\n" + replica_line;
}

} // namespace

TEST_CASE("failover: promote B after A is killed, A refused, A rejoins as B's replica") {
    TempDir root_b("rpmem-compat-failover-b");
    RpmemdInstance::Options admin;
    admin.config_lines = {"admin-client = rpmem-test"};
    RpmemdInstance rpmemd_b(root_b, admin);
    const fs::path b_part = root_b / "target" / "pool.part0";
    target_set(rpmemd_b, "remote.set", b_part);
    const fs::path b_set = rpmemd_b.poolset_dir() / "remote.set"; // B's own pool set file

    TempDir root_a("rpmem-compat-failover-a");
    const fs::path a_set = initiator_set(root_a, {rpmemd_b.target() + " remote.set"});
    const fs::path a_part = initiator_part(root_a);
    EnvironmentChanges environment = pmdk_environment(rpmemd_b);
    const fs::path library_log = root_a / "librpmem.log";
    environment["RPMEM_LOG_FILE"] = library_log.string();
    const EnvironmentChanges tools = rpmemd_b.client_environment();

    // 1. libpmemobj on A replicates to B, and is killed -9 mid-run.
    auto created = obj_tx({"create", a_set.string(), "1"}, environment);
    INFO(created.output());
    REQUIRE(created.status == 0);
    int output = -1;
    Process writer = Process::spawn_piped(
        {required_environment("OBJ_TX"), "run", a_set.string(), "1", "100000000"}, environment,
        output, root_a / "writer.log", root_a.path());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::uint64_t committed = 0;
    while (committed < 300) {
        auto line = read_line(output, deadline);
        REQUIRE(line);
        REQUIRE(line->rfind("committed ", 0) == 0);
        committed = std::stoull(line->substr(10));
    }
    writer.signal(SIGKILL);
    while (auto line = read_line(output, deadline))
        if (line->rfind("committed ", 0) == 0)
            committed = std::stoull(line->substr(10));
    ::close(output);
    REQUIRE(writer.wait_for(std::chrono::seconds(10)) == 128 + SIGKILL);

    // 2. Promote B; its own pool set file opens locally with every acknowledged transaction.
    auto promoted = rpmemctl({"promote", rpmemd_b.target(), "remote.set"}, tools);
    INFO(promoted.output());
    REQUIRE(promoted.status == 0);
    CHECK_THAT(promoted.out, Catch::Contains("generation 1 -> 2"));
    auto role = rpmemctl({"role", rpmemd_b.target(), "remote.set", "--json"}, tools);
    INFO(role.output());
    CHECK(role.status == 0);
    CHECK_THAT(role.out, Catch::Contains("\"state\":\"promoted\"") &&
                             Catch::Contains("\"linked_to_itself\":true"));
    auto on_b = obj_tx({"verify", b_set.string(), "any"}, environment);
    INFO(on_b.output());
    REQUIRE(on_b.status == 0);
    const std::uint64_t at_promote = verified_count(on_b);
    CHECK(at_promote >= committed);

    // 3. A, back with its old pool set, is refused and leaves B's copy alone.
    const std::string b_bytes = read_file(b_part);
    auto refused = obj_tx({"verify", a_set.string(), "any"}, environment);
    INFO(refused.output());
    CHECK(refused.status != 0);
    const std::string library_lines = read_file(library_log);
    INFO("librpmem's log:\n" << library_lines);
    CHECK_THAT(library_lines, Catch::Contains("split brain") &&
                                  Catch::Contains("at generation 2") &&
                                  Catch::Contains("replica at generation 1") &&
                                  Catch::Contains("rpmemctl rejoin"));
    CHECK(read_file(b_part) == b_bytes);

    // 4. B goes on as the primary, alone.
    auto more = obj_tx({"run", b_set.string(), std::to_string(at_promote), "100"}, environment);
    INFO(more.output());
    REQUIRE(more.status == 0);

    // 5. A's pool is served by an rpmemd on A; not consistent, so no promote without --force.
    RpmemdInstance::Options a_options = admin;
    a_options.shared_credentials = rpmemd_b.tls_dir();
    TempDir root_a_daemon("rpmem-compat-failover-a-daemon");
    RpmemdInstance rpmemd_a(root_a_daemon, a_options);
    rpmemd_a.write_pool_set("old.set", set_text(a_part));
    auto not_consistent = rpmemctl({"promote", rpmemd_a.target(), "old.set"}, tools);
    INFO(not_consistent.output());
    CHECK(not_consistent.status == 1);
    CHECK_THAT(not_consistent.err, Catch::Contains("--force"));

    auto rejoined =
        rpmemctl({"rejoin", rpmemd_b.target(), "remote.set", rpmemd_a.target(), "old.set"}, tools);
    INFO(rejoined.output());
    REQUIRE(rejoined.status == 0);
    auto outdated = rpmemctl({"role", rpmemd_a.target(), "old.set"}, tools);
    INFO(outdated.output());
    CHECK_THAT(outdated.out, Catch::Contains("replica, outdated at generation 2"));
    not_consistent = rpmemctl({"promote", rpmemd_a.target(), "old.set"}, tools);
    CHECK(not_consistent.status == 1);

    // 6. B's application set gets a REPLICA line to A: its open resyncs A by digest, and B's
    // next transactions replicate to A.
    const fs::path b_app_set =
        write_file(root_b / "app" / "pool.set",
                   set_text(b_part, "REPLICA " + rpmemd_a.target() + " old.set\n"));
    const std::uint64_t total = at_promote + 150;
    auto resynced =
        obj_tx({"run", b_app_set.string(), std::to_string(at_promote + 100), "50"}, environment);
    INFO(resynced.output());
    REQUIRE(resynced.status == 0);
    auto consistent = rpmemctl({"role", rpmemd_a.target(), "old.set"}, tools);
    INFO(consistent.output());
    CHECK_THAT(consistent.out, Catch::Contains("replica, consistent at generation 2"));

    // The pair, as local files, passes PMDK's checker.
    const fs::path check_set =
        write_file(root_b / "check.set", set_text(b_part, "REPLICA\n" + std::string(kPoolSize) +
                                                              " " + a_part.string() + "\n"));
    auto checked = pmempool({"check", "-v", check_set.string()}, environment);
    INFO(checked.output());
    CHECK(checked.status == 0);
    CHECK_THAT(checked.output(), !Catch::Contains("not consistent"));

    // 7. A, promoted in turn, holds every transaction B wrote after its promote.
    auto back = rpmemctl({"promote", rpmemd_a.target(), "old.set"}, tools);
    INFO(back.output());
    REQUIRE(back.status == 0);
    auto on_a =
        obj_tx({"verify", (rpmemd_a.poolset_dir() / "old.set").string(), std::to_string(total)},
               environment);
    INFO(on_a.output());
    CHECK(on_a.status == 0);
}

TEST_CASE("ocf-tester passes on ocf:rpmem:replica, and a replica that is not up to date is "
          "never promoted by it") {
    // Debian's resource-agents (scripts/install-deps installs it).
    REQUIRE(run({"sh", "-c", "command -v ocf-tester"}).status == 0);
    TempDir root("rpmem-compat-ocf");
    RpmemdInstance::Options admin;
    admin.config_lines = {"admin-client = rpmem-test"};
    RpmemdInstance admin_rpmemd(root, admin);
    target_set(admin_rpmemd, "remote.set", root / "target" / "pool.part0");
    const fs::path a_set = initiator_set(root, {admin_rpmemd.target() + " remote.set"});
    const EnvironmentChanges environment = pmdk_environment(admin_rpmemd);
    auto created = obj_tx({"create", a_set.string(), "20"}, environment); // consistent on close
    INFO(created.output());
    REQUIRE(created.status == 0);

    std::string env_text;
    for (const auto& [name, value] : admin_rpmemd.client_environment())
        if (value)
            env_text += name + "='" + *value + "'\n";
    const fs::path env_file = write_file(root / "rpmemctl.env", env_text);
    const std::vector<std::string> tester{"ocf-tester",
                                          "-n",
                                          "rpmem-test-replica",
                                          "-o",
                                          "target=" + admin_rpmemd.target(),
                                          "-o",
                                          "pool_set=remote.set",
                                          "-o",
                                          "rpmemctl=" + required_environment("RPMEMCTL"),
                                          "-o",
                                          "env_file=" + env_file.string(),
                                          required_environment("OCF_AGENT")};
    auto tested = run(tester, {}, std::chrono::seconds(90));
    INFO(tested.output());
    CHECK(tested.status == 0);
    CHECK_THAT(tested.output(), Catch::Contains("passed all tests"));

    // An outdated replica: the agent's promote refuses (never --force).
    auto opened = obj_tx({"run", a_set.string(), "20", "1"}, environment);
    REQUIRE(opened.status == 0);
    EnvironmentChanges agent_environment{
        {"OCF_ROOT", std::string("/usr/lib/ocf")},
        {"OCF_RESOURCE_INSTANCE", std::string("rpmem-test-outdated")},
        {"OCF_RESKEY_target", admin_rpmemd.target()},
        {"OCF_RESKEY_pool_set", std::string("remote.set")},
        {"OCF_RESKEY_rpmemctl", required_environment("RPMEMCTL")},
        {"OCF_RESKEY_env_file", env_file.string()}};
    const std::string agent = required_environment("OCF_AGENT");
    REQUIRE(run({agent, "start"}, agent_environment).status == 0);
    // Mark the copy outdated through rpmemd's own state file: what a primary going on without
    // it leaves.
    write_file(admin_rpmemd.poolset_dir() / "remote.set.rpmem-state",
               "state = outdated\ngeneration = 1\n");
    CHECK(run({agent, "monitor"}, agent_environment).status == 0);
    auto refused = run({agent, "promote"}, agent_environment);
    INFO(refused.output());
    CHECK(refused.status == 1);
    CHECK(run({agent, "monitor"}, agent_environment).status == 0); // still a replica
    CHECK(run({agent, "stop"}, agent_environment).status == 0);
    CHECK(run({agent, "monitor"}, agent_environment).status == 7);
}
