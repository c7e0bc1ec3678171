// SPDX-License-Identifier: BSD-3-Clause
// Debian's pmempool (libpmempool) on pool sets with a REPLICA line: create, rm, and sync
// rebuilding a lost remote replica (libpmempool removes the broken remote pool by running
// $RPMEM_SSH itself; rpmem-ssh relays that to rpmemd over TLS).
#include <filesystem>

#include <catch2/catch.hpp>

#include "compat_helpers.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

TEST_CASE("pmempool create obj and pmempool rm on a set with a REPLICA line") {
    OneRemoteReplica setup("rpmem-compat-pmempool");
    auto& [root, rpmemd, target_part, set, environment] = setup;

    auto created =
        pmempool({"create", "obj", "--layout", "rpmem-compat", set.string()}, environment);
    INFO(created.output());
    REQUIRE(created.status == 0);
    CHECK(fs::exists(initiator_part(root)));
    CHECK(fs::exists(target_part));

    // The pool pmempool made is a working replicated pool.
    auto used = obj_tx({"run", set.string(), "0", "50"}, environment);
    INFO(used.output());
    REQUIRE(used.status == 0);
    check_target_copy_verifies(root, target_part, "50", environment);

    auto removed = pmempool({"rm", "-v", set.string()}, environment);
    INFO(removed.output());
    REQUIRE(removed.status == 0);
    CHECK_FALSE(fs::exists(initiator_part(root)));
    CHECK_FALSE(fs::exists(target_part));
    CHECK(fs::exists(rpmemd.poolset_dir() / "remote.set")); // -a would remove it too

    // Created again, `rm -a` also removes the remote pool set file.
    created = pmempool({"create", "obj", "--layout", "rpmem-compat", set.string()}, environment);
    REQUIRE(created.status == 0);
    removed = pmempool({"rm", "-a", set.string()}, environment);
    INFO(removed.output());
    REQUIRE(removed.status == 0);
    CHECK_FALSE(fs::exists(target_part));
    CHECK_FALSE(fs::exists(rpmemd.poolset_dir() / "remote.set"));
}

TEST_CASE("pmempool sync rebuilds a deleted remote replica") {
    OneRemoteReplica setup("rpmem-compat-sync");
    auto& [root, rpmemd, target_part, set, environment] = setup;
    environment["RPMEM_SSH"] = required_environment("RPMEM_SSH_SHIM");

    create_pool(set, "300", environment);

    fs::remove(target_part);
    auto synced = pmempool({"sync", "-v", set.string()}, environment);
    INFO(synced.output());
    REQUIRE(synced.status == 0);
    REQUIRE(fs::exists(target_part));

    // The rebuilt replica holds every transaction, and the pool goes on replicating.
    check_target_copy_verifies(root, target_part, "300", environment);
    auto more = obj_tx({"run", set.string(), "300", "20"}, environment);
    INFO(more.output());
    CHECK(more.status == 0);
    check_target_copy_verifies(root, target_part, "320", environment);
}
