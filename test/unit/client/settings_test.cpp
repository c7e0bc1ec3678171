// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "client/settings.h"
#include "temp_dir.h"

using namespace rpmem::client;

using rpmem::test::TempDir;

namespace {

Environment environment_of(std::map<std::string, std::string> variables) {
    return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
        auto found = variables.find(std::string(name));
        if (found == variables.end())
            return std::nullopt;
        return found->second;
    };
}

} // namespace

TEST_CASE("defaults without files or variables") {
    TempDir home;
    auto settings = load_settings(environment_of({{"HOME", home.path()}}));
    REQUIRE(settings);
    CHECK(settings->tls_ca.empty());
    CHECK(settings->provider.empty());
    CHECK(settings->max_lanes == 0);
    CHECK(settings->work_queue_size == 50);
    CHECK_FALSE(settings->enable_sockets);
    CHECK(settings->enable_verbs);
    CHECK(settings->method == rpmem::protocol::PersistMethod::any);
}

TEST_CASE("PMDK's variables and rpmem's are read, and the environment wins over the file") {
    TempDir home;
    home.write(".config/rpmem/client.conf", "# client settings\n"
                                            "tls-ca = /etc/rpmem/ca.crt\n"
                                            "tls-cert = /file/client.crt\n"
                                            "max-nlanes = 8   # cap\n"
                                            "provider = sockets\n");
    auto settings = load_settings(environment_of({
        {"HOME", home.path()},
        {"RPMEM_TLS_CERT", "/env/client.crt"},
        {"RPMEM_TLS_KEY", "/env/client.key"},
        {"RPMEM_MAX_NLANES", "4"},
        {"RPMEM_WORK_QUEUE_SIZE", "16"},
        {"RPMEM_ENABLE_SOCKETS", "1"},
        {"RPMEM_ENABLE_VERBS", "0"},
        {"RPMEM_PERSIST_METHOD", "gpspm"},
        {"RPMEM_TIMEOUT", "2500"},
        {"RPMEM_SPIN_US", "20"},
    }));
    REQUIRE(settings);
    CHECK(settings->tls_ca == "/etc/rpmem/ca.crt");
    CHECK(settings->tls_cert == "/env/client.crt");
    CHECK(settings->tls_key == "/env/client.key");
    CHECK(settings->provider == "sockets");
    CHECK(settings->max_lanes == 4);
    CHECK(settings->work_queue_size == 16);
    CHECK(settings->enable_sockets);
    CHECK_FALSE(settings->enable_verbs);
    CHECK(settings->method == rpmem::protocol::PersistMethod::gpspm);
    CHECK(settings->timeout == std::chrono::milliseconds(2500));
    CHECK(settings->spin == std::chrono::microseconds(20));
}

TEST_CASE("RPMEM_CONFIG names the only file read, and it must exist") {
    TempDir dir;
    auto file = dir.write("mine.conf", "provider = tcp\n");
    auto settings = load_settings(environment_of({{"RPMEM_CONFIG", file}}));
    REQUIRE(settings);
    CHECK(settings->provider == "tcp");

    auto missing =
        load_settings(environment_of({{"RPMEM_CONFIG", (dir / "absent.conf").string()}}));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().errno_value() == ENOENT);
    CHECK_THAT(missing.error().message(), Catch::Contains("absent.conf"));
}

TEST_CASE("bad values name the variable, or the file and line") {
    auto bad_variable = load_settings(environment_of({{"RPMEM_MAX_NLANES", "0"}}));
    REQUIRE_FALSE(bad_variable);
    CHECK(bad_variable.error().errno_value() == EINVAL);
    CHECK_THAT(bad_variable.error().message(),
               Catch::StartsWith("environment variable RPMEM_MAX_NLANES: expected a whole number"));

    auto bad_provider = load_settings(environment_of({{"RPMEM_PROVIDER", "carrier-pigeon"}}));
    REQUIRE_FALSE(bad_provider);
    CHECK_THAT(bad_provider.error().message(), Catch::Contains("expected tcp, sockets or verbs"));

    TempDir dir;
    const std::string file = dir.write("bad.conf", "provider = tcp\n\nwork-queue-size = 1\n");
    auto bad_file = load_settings(environment_of({{"RPMEM_CONFIG", file}}));
    REQUIRE_FALSE(bad_file);
    CHECK_THAT(bad_file.error().message(),
               Catch::StartsWith(file + ":3: work-queue-size: expected a whole number from 2"));

    auto unknown = dir.write("unknown.conf", "colour = blue\n");
    auto bad_key = load_settings(environment_of({{"RPMEM_CONFIG", unknown}}));
    REQUIRE_FALSE(bad_key);
    CHECK_THAT(bad_key.error().message(), Catch::EndsWith(":1: unknown key 'colour'"));
}

TEST_CASE("RPMEM_SPIN_US=0 never busy-polls; a timeout of 0 is refused") {
    auto never = load_settings(environment_of({{"RPMEM_SPIN_US", "0"}}));
    REQUIRE(never);
    CHECK(never->spin == std::chrono::microseconds(0));

    auto no_timeout = load_settings(environment_of({{"RPMEM_TIMEOUT", "0"}}));
    REQUIRE_FALSE(no_timeout);
    CHECK_THAT(no_timeout.error().message(),
               Catch::StartsWith("environment variable RPMEM_TIMEOUT"));
}

TEST_CASE("the log settings: the system log unless a level or a file is named") {
    auto defaults = load_settings(environment_of({}));
    REQUIRE(defaults);
    CHECK_FALSE(defaults->log_level);
    CHECK(defaults->log_file.empty());

    auto level = load_settings(environment_of({{"RPMEM_LOG_LEVEL", "warn"}}));
    REQUIRE(level);
    CHECK(level->log_level == "warn");
    auto bad = load_settings(environment_of({{"RPMEM_LOG_LEVEL", "loud"}}));
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message(), Catch::Contains("RPMEM_LOG_LEVEL"));
}

TEST_CASE("min-in-sync-replicas: all by default, or a number of replicas") {
    auto defaults = load_settings(environment_of({}));
    REQUIRE(defaults);
    CHECK(defaults->min_in_sync_replicas == 0);
    auto one = load_settings(environment_of({{"RPMEM_MIN_IN_SYNC_REPLICAS", "1"}}));
    REQUIRE(one);
    CHECK(one->min_in_sync_replicas == 1);
    auto all = load_settings(environment_of({{"RPMEM_MIN_IN_SYNC_REPLICAS", "all"}}));
    REQUIRE(all);
    CHECK(all->min_in_sync_replicas == 0);
    for (const char* bad : {"0", "none", "-1", "4097"}) {
        CAPTURE(bad);
        auto refused = load_settings(environment_of({{"RPMEM_MIN_IN_SYNC_REPLICAS", bad}}));
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message(),
                   Catch::Contains("RPMEM_MIN_IN_SYNC_REPLICAS") &&
                       Catch::Contains("expected all or a whole number from 1 to 4096"));
    }
}

TEST_CASE("fan-out: on by default, off with RPMEM_FAN_OUT=0") {
    auto defaults = load_settings(environment_of({}));
    REQUIRE(defaults);
    CHECK(defaults->fan_out);
    auto off = load_settings(environment_of({{"RPMEM_FAN_OUT", "0"}}));
    REQUIRE(off);
    CHECK_FALSE(off->fan_out);
    auto refused = load_settings(environment_of({{"RPMEM_FAN_OUT", "sometimes"}}));
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message(), Catch::Contains("RPMEM_FAN_OUT"));
}

TEST_CASE("replication: sync by default; async with its lag bounds, from the file or the "
          "environment") {
    auto defaults = load_settings(environment_of({}));
    REQUIRE(defaults);
    CHECK(defaults->replication == rpmem::client::Replication::sync);
    CHECK(defaults->max_lag == 8ULL << 20);
    CHECK(defaults->max_lag_time == std::chrono::milliseconds(1000));

    TempDir home;
    home.write(".config/rpmem/client.conf", "replication = async\n"
                                            "max-lag = 256K\n"
                                            "max-lag-time = 200ms\n");
    auto from_file = load_settings(environment_of({{"HOME", home.path()}}));
    REQUIRE(from_file);
    CHECK(from_file->replication == rpmem::client::Replication::async);
    CHECK(from_file->max_lag == 256 * 1024);
    CHECK(from_file->max_lag_time == std::chrono::milliseconds(200));
    auto overridden = load_settings(environment_of(
        {{"HOME", home.path()}, {"RPMEM_REPLICATION", "sync"}, {"RPMEM_MAX_LAG_TIME", "2s"}}));
    REQUIRE(overridden);
    CHECK(overridden->replication == rpmem::client::Replication::sync);
    CHECK(overridden->max_lag_time == std::chrono::milliseconds(2000));

    for (const auto& [variable, value, text] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"RPMEM_REPLICATION", "eventually", "expected sync or async"},
             {"RPMEM_MAX_LAG", "1K", "expected a size from 64K to 1G"},
             {"RPMEM_MAX_LAG", "2G", "expected a size from 64K to 1G"},
             {"RPMEM_MAX_LAG", "lots", "expected a size"},
             {"RPMEM_MAX_LAG_TIME", "0", "RPMEM_MAX_LAG_TIME"}}) {
        auto refused = load_settings(environment_of({{variable, value}}));
        INFO(variable << "=" << value);
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message(), Catch::Contains(variable) && Catch::Contains(text));
    }
}

TEST_CASE("PMDK's provider switches: sockets only when RPMEM_ENABLE_SOCKETS is set") {
    auto off = load_settings(environment_of({{"RPMEM_PROVIDER", "sockets"}}));
    REQUIRE_FALSE(off);
    CHECK(off.error().errno_value() == EINVAL);
    CHECK_THAT(off.error().message(), Catch::Contains("RPMEM_ENABLE_SOCKETS=1"));
    auto on = load_settings(
        environment_of({{"RPMEM_PROVIDER", "sockets"}, {"RPMEM_ENABLE_SOCKETS", "1"}}));
    REQUIRE(on);
    CHECK(on->provider == "sockets");
    auto no_verbs =
        load_settings(environment_of({{"RPMEM_PROVIDER", "verbs"}, {"RPMEM_ENABLE_VERBS", "0"}}));
    REQUIRE_FALSE(no_verbs);
    CHECK_THAT(no_verbs.error().message(), Catch::Contains("RPMEM_ENABLE_VERBS=0"));
}
