// SPDX-License-Identifier: BSD-3-Clause
// The workers' user and group as the config names them (rpmemd/supervisor/account_ids.h).
#include <cerrno>

#include <catch2/catch.hpp>

#include "rpmemd/supervisor/account_ids.h"

using namespace rpmem::daemon;

TEST_CASE("the worker's user and group resolve by name or number", "[config]") {
    CHECK(resolve_user("root") == uid_t{0});
    CHECK(resolve_user("65534") == uid_t{65534});
    CHECK(resolve_group("0") == gid_t{0});
    CHECK(resolve_group("root") == gid_t{0});
    if (auto nobody = resolve_user("nobody"))
        CHECK(*nobody == 65534);
    auto unknown = resolve_user("no-such-user-rpmem");
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().errno_value() == ENOENT);
    CHECK(unknown.error().message().find("no-such-user-rpmem") != std::string::npos);
    auto bad_group = resolve_group("12x");
    REQUIRE_FALSE(bad_group);
    CHECK(bad_group.error().errno_value() == ENOENT);
}
