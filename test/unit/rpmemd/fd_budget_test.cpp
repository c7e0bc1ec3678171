// SPDX-License-Identifier: BSD-3-Clause
#include <cstdint>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "rpmemd/supervisor/fd_budget.h"

using namespace rpmem::daemon;

TEST_CASE("the descriptors needed follow the session and pending limits") {
    Config config;
    CHECK(descriptors_needed(config) == 64 + 128 + 256 * 17); // the defaults: 4544
    config.max_sessions = 1000;
    config.max_pending_connections = 500;
    CHECK(descriptors_needed(config) == 64 + 500 + 1000 * 17);
}

TEST_CASE("the default limits fit the descriptor limit rpmemd.service sets") {
    std::ifstream unit(RPMEMD_SERVICE);
    REQUIRE(unit);
    std::uint64_t limit = 0;
    for (std::string line; std::getline(unit, line);)
        if (line.rfind("LimitNOFILE=", 0) == 0)
            limit = std::stoull(line.substr(12));
    REQUIRE(limit > 0);
    const Config defaults;
    CHECK(defaults.max_sessions >= 256);
    CHECK(descriptors_needed(defaults) <= limit);
}

TEST_CASE("a soft limit that covers the need is kept") {
    Config config;
    FdPlan plan = plan_fd_limit(832, 1024, 4096, config);
    CHECK_FALSE(plan.raise);
    CHECK(plan.enough);
    CHECK(plan.soft_limit == 1024);
}

TEST_CASE("a short soft limit is raised to the need, within the hard limit") {
    Config config;
    FdPlan plan = plan_fd_limit(2000, 1024, 524288, config);
    CHECK(plan.raise);
    CHECK(plan.enough);
    CHECK(plan.soft_limit == 2000);
    CHECK_THAT(plan.message, Catch::Contains("raised the descriptor limit from 1024 to 2000"));

    plan = plan_fd_limit(2000, 1024, UINT64_MAX, config);
    CHECK(plan.raise);
    CHECK(plan.soft_limit == 2000);
}

TEST_CASE("a short hard limit is raised to as far as it goes, with advice") {
    Config config;
    FdPlan plan = plan_fd_limit(5000, 1024, 4096, config);
    CHECK(plan.raise);
    CHECK_FALSE(plan.enough);
    CHECK(plan.soft_limit == 4096);
    CHECK_THAT(plan.message, Catch::Contains("LimitNOFILE="));
    CHECK_THAT(plan.message, Catch::Contains("max-sessions"));
    CHECK_THAT(plan.message, Catch::Contains("max-pending-connections"));

    plan = plan_fd_limit(5000, 1024, 1024, config);
    CHECK_FALSE(plan.raise);
    CHECK_FALSE(plan.enough);
}
