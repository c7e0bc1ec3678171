// SPDX-License-Identifier: BSD-3-Clause
// rpmemd's logging set-up: PMDK's level names, a log file that the daemon's and the libraries'
// lines both reach, filtered by level.
#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "channel/logger.h"
#include "poolset/poolset_logger.h"
#include "rpmemd/supervisor/logging.h"
#include "temp_dir.h"

using namespace rpmem::daemon;

namespace {

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

TEST_CASE("PMDK's five levels map onto spdlog's in order") {
    CHECK(to_spdlog_level(LogLevel::err) == spdlog::level::err);
    CHECK(to_spdlog_level(LogLevel::warn) == spdlog::level::warn);
    CHECK(to_spdlog_level(LogLevel::notice) == spdlog::level::info);
    CHECK(to_spdlog_level(LogLevel::info) == spdlog::level::debug);
    CHECK(to_spdlog_level(LogLevel::debug) == spdlog::level::trace);
}

TEST_CASE("a log file receives the daemon's and the libraries' lines at the configured level") {
    rpmem::test::TempDir dir;
    Config config;
    config.log_file = dir / "rpmemd.log";
    config.log_level = LogLevel::notice;
    start_logging();
    REQUIRE(configure_logging(config));

    spdlog::info("session 3 (alice@127.0.0.1:1): opened");
    spdlog::debug("a detail below notice");
    rpmem::channel::logger().info("from the channel");
    rpmem::poolset::logger().warn("from the pool layer");
    rpmem::channel::logger().debug("channel detail below notice");

    std::string text = read(config.log_file);
    CHECK_THAT(text, Catch::Contains("session 3 (alice@127.0.0.1:1): opened"));
    CHECK_THAT(text, Catch::Contains("from the channel"));
    CHECK_THAT(text, Catch::Contains("from the pool layer"));
    CHECK_THAT(text, !Catch::Contains("below notice"));

    struct stat st {};
    REQUIRE(::stat(config.log_file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0027) == 0); // no one but the daemon (and its group, reading)
}

TEST_CASE("an unusable log file is an error naming it") {
    rpmem::test::TempDir dir;
    Config config;
    config.log_file = dir / "missing-dir/rpmemd.log";
    auto configured = configure_logging(config);
    REQUIRE_FALSE(configured);
    CHECK(configured.error().errno_value() == ENOENT);
    CHECK_THAT(configured.error().message(), Catch::Contains(config.log_file));
}
