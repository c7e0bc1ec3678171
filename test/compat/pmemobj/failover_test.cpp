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
#include "failover_flow.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

TEST_CASE("failover: promote B after A is killed, A refused, A rejoins as B's replica") {
    // Both hosts on this machine's loopback; test/faults runs the same in network namespaces.
    FailoverHosts hosts;
    hosts.b.server_names = {"localhost", "127.0.0.1"};
    run_failover_acceptance(hosts);
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
    create_pool(a_set, "20", environment); // consistent on close

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
