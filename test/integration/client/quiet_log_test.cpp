// SPDX-License-Identifier: BSD-3-Clause
// librpmem's log stays off the application's stderr unless asked for: PMDK's create-or-open
// idiom (create, EEXIST, open), run by rpmem-hello against a real rpmemd, prints nothing of
// librpmem's; with RPMEM_LOG_FILE its lines are in the file, at info, not error.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "hello_target.h"
#include "temp_dir.h"

using namespace rpmem::test;

namespace {} // namespace

TEST_CASE("PMDK's create-or-open idiom leaves the application's stderr empty") {
    HelloTarget setup;
    auto& [root, scratch, rpmemd, environment, hello] = setup;

    // The first run creates; the second gets EEXIST and opens.
    auto first = setup.run_hello();
    INFO("first run:\n" << first.output());
    REQUIRE(first.status == 0);
    CHECK_THAT(first.out, Catch::Contains("Next message: Hello world!"));
    CHECK(first.err.empty());

    auto second = setup.run_hello();
    INFO("second run:\n" << second.output());
    REQUIRE(second.status == 0);
    CHECK_THAT(second.out, Catch::Contains("Previous message: Hello world!"));
    CHECK(second.err.empty());

    // Asked for a file: the create that found the pool is there, at info.
    const auto library_log = root / "librpmem.log";
    environment["RPMEM_LOG_FILE"] = library_log.string();
    auto third = setup.run_hello();
    INFO("third run:\n" << third.output());
    REQUIRE(third.status == 0);
    CHECK(third.err.empty());
    const std::string lines = read_text(library_log);
    INFO("librpmem's log:\n" << lines);
    CHECK_THAT(lines, Catch::Contains("[info] creating hello.set on " + rpmemd.target()) &&
                          Catch::Contains("[info] opened hello.set on " + rpmemd.target()));
    CHECK_THAT(lines, !Catch::Contains("[error]"));

    // RPMEM_LOG_LEVEL alone asks for stderr.
    environment["RPMEM_LOG_FILE"] = std::nullopt;
    environment["RPMEM_LOG_LEVEL"] = "info";
    auto fourth = setup.run_hello();
    INFO("fourth run:\n" << fourth.output());
    REQUIRE(fourth.status == 0);
    CHECK_THAT(fourth.err, Catch::Contains("opened hello.set on"));
}
