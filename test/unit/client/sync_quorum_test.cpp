// SPDX-License-Identifier: BSD-3-Clause
#include <memory>
#include <optional>

#include <catch2/catch.hpp>

#include "client/sync_quorum.h"

using rpmem::client::SyncQuorum;

TEST_CASE("all must stay in sync by default: no member may leave unless regardless") {
    auto quorum = std::make_shared<SyncQuorum>(0);
    SyncQuorum::Member a(quorum);
    SyncQuorum::Member b(quorum);
    CHECK_FALSE(a.leave_sync(false));
    CHECK(a.describe() == "2 of 2 replicas in sync, at least 2 required");
    CHECK(a.leave_sync(true));  // continue
    CHECK(a.leave_sync(false)); // already out
    CHECK(b.describe() == "1 of 2 replicas in sync, at least 2 required");
    a.rejoin_sync();
    CHECK(b.describe() == "2 of 2 replicas in sync, at least 2 required");
}

TEST_CASE("a minimum of 1 of 3: two may leave, the last may not") {
    auto quorum = std::make_shared<SyncQuorum>(1);
    SyncQuorum::Member a(quorum);
    SyncQuorum::Member b(quorum);
    SyncQuorum::Member c(quorum);
    CHECK(a.leave_sync(false));
    CHECK(b.leave_sync(false));
    CHECK_FALSE(c.leave_sync(false));
    CHECK(c.describe() == "1 of 3 replicas in sync, at least 1 required");
    b.rejoin_sync();
    CHECK(c.leave_sync(false));
    CHECK_FALSE(b.leave_sync(false));
}

TEST_CASE("a member that closes takes its place along; the minimum never exceeds the members") {
    auto quorum = std::make_shared<SyncQuorum>(2);
    SyncQuorum::Member a(quorum);
    {
        SyncQuorum::Member b(quorum);
        CHECK(b.leave_sync(true));
        CHECK(a.describe() == "1 of 2 replicas in sync, at least 2 required");
    }
    CHECK(a.describe() == "1 of 1 replicas in sync, at least 1 required");
    CHECK_FALSE(a.leave_sync(false));
}
