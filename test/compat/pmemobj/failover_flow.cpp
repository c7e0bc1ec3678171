// SPDX-License-Identifier: BSD-3-Clause
#include "failover_flow.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include "compat_helpers.h"

namespace rpmem::test {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> on(const std::vector<std::string>& host, std::vector<std::string> argv) {
    argv.insert(argv.begin(), host.begin(), host.end());
    return argv;
}

RunResult obj_tx_on(const std::vector<std::string>& host, const std::vector<std::string>& args,
                    const EnvironmentChanges& environment) {
    std::vector<std::string> argv{required_environment("OBJ_TX")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(on(host, argv), environment);
}

RunResult rpmemctl_on(const std::vector<std::string>& host, const std::vector<std::string>& args,
                      const EnvironmentChanges& environment) {
    std::vector<std::string> argv{required_environment("RPMEMCTL")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(on(host, argv), environment);
}

std::string set_text(const fs::path& part, const std::string& replica_line = "") {
    return "PMEMPOOLSET\n" + std::string(kPoolSize) + " " + part.string() + "\n" + replica_line;
}

} // namespace

void run_failover_acceptance(const FailoverHosts& hosts) {
    TempDir root_b("rpmem-failover-b");
    RpmemdInstance::Options b_options = hosts.b;
    b_options.config_lines.push_back("admin-client = rpmem-test");
    RpmemdInstance rpmemd_b(root_b, b_options);
    const fs::path b_part = root_b / "target" / "pool.part0";
    target_set(rpmemd_b, "remote.set", b_part);
    const fs::path b_set = rpmemd_b.poolset_dir() / "remote.set"; // B's own pool set file

    TempDir root_a("rpmem-failover-a");
    const fs::path a_set = initiator_set(root_a, {rpmemd_b.target() + " remote.set"});
    const fs::path a_part = initiator_part(root_a);
    EnvironmentChanges environment = pmdk_environment(rpmemd_b);
    const fs::path library_log = library_log_in(root_a, environment);
    const EnvironmentChanges tools = rpmemd_b.client_environment();

    // 1. libpmemobj on A replicates to B, and is killed -9 mid-run.
    auto created = obj_tx_on(hosts.on_a, {"create", a_set.string(), "1"}, environment);
    INFO(created.output());
    REQUIRE(created.status == 0);
    int output = -1;
    Process writer = Process::spawn_piped(
        on(hosts.on_a, {required_environment("OBJ_TX"), "run", a_set.string(), "1", "100000000"}),
        environment, output, root_a / "writer.log", root_a.path());
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
    auto promoted = rpmemctl_on(hosts.on_b, {"promote", rpmemd_b.target(), "remote.set"}, tools);
    INFO(promoted.output());
    REQUIRE(promoted.status == 0);
    CHECK_THAT(promoted.out, Catch::Contains("generation 1 -> 2"));
    auto role = rpmemctl_on(hosts.on_b, {"role", rpmemd_b.target(), "remote.set", "--json"}, tools);
    INFO(role.output());
    CHECK(role.status == 0);
    CHECK_THAT(role.out, Catch::Contains("\"state\":\"promoted\"") &&
                             Catch::Contains("\"linked_to_itself\":true"));
    auto on_b = obj_tx_on(hosts.on_b, {"verify", b_set.string(), "any"}, environment);
    INFO(on_b.output());
    REQUIRE(on_b.status == 0);
    const std::uint64_t at_promote = verified_count(on_b);
    CHECK(at_promote >= committed);

    // 3. A, back with its old pool set, is refused and leaves B's copy alone.
    const std::string b_bytes = read_file(b_part);
    auto refused = obj_tx_on(hosts.on_a, {"verify", a_set.string(), "any"}, environment);
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
    auto more = obj_tx_on(hosts.on_b, {"run", b_set.string(), std::to_string(at_promote), "100"},
                          environment);
    INFO(more.output());
    REQUIRE(more.status == 0);

    // 5. A's pool is served by an rpmemd on A; not consistent, so no promote without --force.
    RpmemdInstance::Options a_options = hosts.a;
    a_options.config_lines.push_back("admin-client = rpmem-test");
    a_options.shared_credentials = rpmemd_b.tls_dir();
    TempDir root_a_daemon("rpmem-failover-a-daemon");
    RpmemdInstance rpmemd_a(root_a_daemon, a_options);
    rpmemd_a.write_pool_set("old.set", set_text(a_part));
    auto not_consistent = rpmemctl_on(hosts.on_a, {"promote", rpmemd_a.target(), "old.set"}, tools);
    INFO(not_consistent.output());
    CHECK(not_consistent.status == 1);
    CHECK_THAT(not_consistent.err, Catch::Contains("--force"));

    auto rejoined = rpmemctl_on(
        hosts.on_b, {"rejoin", rpmemd_b.target(), "remote.set", rpmemd_a.target(), "old.set"},
        tools);
    INFO(rejoined.output());
    REQUIRE(rejoined.status == 0);
    auto outdated = rpmemctl_on(hosts.on_a, {"role", rpmemd_a.target(), "old.set"}, tools);
    INFO(outdated.output());
    CHECK_THAT(outdated.out, Catch::Contains("replica, outdated at generation 2"));
    not_consistent = rpmemctl_on(hosts.on_a, {"promote", rpmemd_a.target(), "old.set"}, tools);
    CHECK(not_consistent.status == 1);

    // 6. B's application set gets a REPLICA line to A: its open resyncs A by digest, and B's
    // next transactions replicate to A.
    const fs::path b_app_set =
        write_file(root_b / "app" / "pool.set",
                   set_text(b_part, "REPLICA " + rpmemd_a.target() + " old.set\n"));
    const std::uint64_t total = at_promote + 150;
    auto resynced =
        obj_tx_on(hosts.on_b, {"run", b_app_set.string(), std::to_string(at_promote + 100), "50"},
                  environment);
    INFO(resynced.output());
    REQUIRE(resynced.status == 0);
    auto consistent = rpmemctl_on(hosts.on_a, {"role", rpmemd_a.target(), "old.set"}, tools);
    INFO(consistent.output());
    CHECK_THAT(consistent.out, Catch::Contains("replica, consistent at generation 2"));

    // The pair, as local files, passes PMDK's checker.
    const fs::path check_set =
        write_file(root_b / "check.set", set_text(b_part, "REPLICA\n" + std::string(kPoolSize) +
                                                              " " + a_part.string() + "\n"));
    auto checked =
        run(on(hosts.on_b, {"pmempool", "check", "-v", check_set.string()}), environment);
    INFO(checked.output());
    CHECK(checked.status == 0);
    CHECK_THAT(checked.output(), !Catch::Contains("not consistent"));

    // 7. A, promoted in turn, holds every transaction B wrote after its promote.
    auto back = rpmemctl_on(hosts.on_a, {"promote", rpmemd_a.target(), "old.set"}, tools);
    INFO(back.output());
    REQUIRE(back.status == 0);
    auto on_a =
        obj_tx_on(hosts.on_a,
                  {"verify", (rpmemd_a.poolset_dir() / "old.set").string(), std::to_string(total)},
                  environment);
    INFO(on_a.output());
    CHECK(on_a.status == 0);
}

} // namespace rpmem::test
