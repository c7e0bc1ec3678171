// SPDX-License-Identifier: BSD-3-Clause
// Debian's unmodified libpmemobj and pmempool replicate through our librpmem.so.1 (loaded with
// LD_LIBRARY_PATH, exactly as they would load PMDK's) to a real rpmemd on 127.0.0.1.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <signal.h>

#include "compat_helpers.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

namespace {

constexpr int kTransactions = 1000;

} // namespace

TEST_CASE("an unmodified libpmemobj application replicates through a REPLICA line, and the "
          "target alone holds the complete pool") {
    const std::string provider = GENERATE("tcp", "sockets");
    INFO("provider " << provider);
    OneRemoteReplica setup("rpmem-compat-obj");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    environment["RPMEM_PROVIDER"] = provider;
    environment["RPMEM_ENABLE_SOCKETS"] = "1"; // PMDK's switch: sockets only when it is set

    create_pool(set, std::to_string(kTransactions), environment);

    // Reopening goes through rpmem_open and rpmem_read (libpmemobj checks the remote header
    // and reads the pool descriptor and heap through librpmem).
    auto reopened = obj_tx({"verify", set.string(), std::to_string(kTransactions)}, environment);
    INFO(reopened.output());
    REQUIRE(reopened.status == 0);

    // With rpmemd stopped, the initiator's part and the target's part form a local 2-replica
    // set that PMDK's own checker finds consistent.
    REQUIRE(rpmemd.stop() == 0);
    const fs::path check_set =
        write_file(root / "check.set", "PMEMPOOLSET\n" + std::string(kPoolSize) + " " +
                                           initiator_part(root).string() + "\nREPLICA\n" +
                                           kPoolSize + " " + target_part.string() + "\n");
    auto checked = pmempool({"check", "-v", check_set.string()}, environment);
    INFO(checked.output());
    CHECK(checked.status == 0);
    CHECK_THAT(checked.output(), Catch::Contains("consistent"));
    CHECK_THAT(checked.output(), !Catch::Contains("not consistent"));

    // Failover: the target's copy as the master replica. The second replica is the
    // initiator's header page followed by the target's data, so no data byte comes from the
    // initiator: libpmemobj sees every transaction only if the target has them all.
    check_target_copy_verifies(root, target_part, std::to_string(kTransactions), environment);
}

TEST_CASE("two REPLICA lines to two rpmemd instances") {
    TempDir root("rpmem-compat-two");
    TempDir second_root("rpmem-compat-two-b");
    RpmemdInstance first(root);
    RpmemdInstance second(second_root, {.shared_credentials = first.tls_dir()});
    target_set(first, "a.set", root / "target-a" / "pool.part0");
    target_set(second, "b.set", second_root / "target-b" / "pool.part0");
    const fs::path set =
        initiator_set(root, {first.target() + " a.set", second.target() + " b.set"});
    // One CA signs both daemons' certificates, so one client identity reaches both.
    EnvironmentChanges environment = pmdk_environment(first);
    create_pool(set, "200", environment);
    auto verified = obj_tx({"verify", set.string(), "200"}, environment);
    INFO(verified.output());
    CHECK(verified.status == 0);
}
