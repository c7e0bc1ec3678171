// SPDX-License-Identifier: BSD-3-Clause
// `rpmemd --remove SET [--force] [--pool-set]` as libpmempool runs it: exit status 0 or the
// errno, a message on stderr; the same rules as the remove request (names beneath the pool set
// directory, locks). Plus --help and --version.
#include <cerrno>
#include <filesystem>

#include <catch2/catch.hpp>

#include "channel/client.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;

namespace {

RunResult rpmemd(std::vector<std::string> args) {
    args.insert(args.begin(), required_environment("RPMEMD"));
    return run(args);
}

RunResult rpmemd(TargetHost& host, std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", host.config_file()});
    return rpmemd(std::move(args));
}

bool exists(const std::string& path) {
    return std::filesystem::exists(path);
}

} // namespace

TEST_CASE("rpmemd --remove removes the parts, and the set file with --pool-set") {
    TargetHost host;
    std::string set_file = host.write_set("pool.set", "pool", 2);
    {
        auto client = host.client();
        protocol::CreateRequest create;
        create.pool_set = "pool.set";
        create.lanes = 1;
        create.attributes = pmemobj_attributes();
        REQUIRE(channel::expect<protocol::CreateReply>(client->call(create), "create"));

        // In use by the serving daemon: the part lock says EBUSY.
        auto busy = rpmemd(host, {"--remove", "pool.set"});
        CHECK(busy.status == EBUSY);
        CHECK_THAT(busy.err, Catch::StartsWith("rpmemd: ") && Catch::Contains("in use"));
        CHECK(exists(host.dir() / "pool.0"));
    }
    REQUIRE(host.wait_for_log("pool set 'pool.set' closed"));

    auto removed = rpmemd(host, {"--remove", "pool.set"});
    CHECK(removed.status == 0);
    CHECK(removed.err.empty());
    CHECK_FALSE(exists(host.dir() / "pool.0"));
    CHECK_FALSE(exists(host.dir() / "pool.1"));
    CHECK(exists(set_file));

    // The parts are gone: an error without --force, success with it.
    auto missing = rpmemd(host, {"-r", "pool.set"});
    CHECK(missing.status == ENOENT);
    CHECK_THAT(missing.err, Catch::Contains("pool.0"));
    CHECK(rpmemd(host, {"--remove", "pool.set", "--force"}).status == 0);
    CHECK(rpmemd(host, {"--remove=pool.set", "-f", "-s"}).status == 0);
    CHECK_FALSE(exists(set_file));
    CHECK(rpmemd(host, {"--remove", "pool.set", "--force"}).status == ENOENT);
}

TEST_CASE("rpmemd --remove keeps names beneath the pool set directory") {
    TargetHost host({.start = false});
    std::string outside = host.dir().write(
        "outside.set", "PMEMPOOLSET\n2M " + (host.dir() / "victim").string() + "\n");
    host.dir().write("victim", std::string(2 << 20, '\0'));
    for (std::string name : {std::string("../outside.set"), outside}) {
        CAPTURE(name);
        auto refused = rpmemd(host, {"--remove", name, "--force", "--pool-set"});
        CHECK(refused.status == EINVAL);
        CHECK_THAT(refused.err, Catch::Contains("invalid pool set name"));
    }
    CHECK(exists(outside));
    CHECK(exists(host.dir() / "victim"));
}

TEST_CASE("rpmemd --help, --version and bad command lines") {
    auto help = rpmemd({"--help"});
    CHECK(help.status == 0);
    CHECK_THAT(help.out, Catch::Contains("--remove SET"));
    auto version = rpmemd({"--version"});
    CHECK(version.status == 0);
    CHECK_THAT(version.out, Catch::StartsWith("rpmemd "));
    auto bad = rpmemd({"--no-such-option"});
    CHECK(bad.status == EINVAL);
    CHECK_THAT(bad.err, Catch::Contains("--no-such-option"));
    auto stray = rpmemd({"--force"});
    CHECK(stray.status == EINVAL);
}

TEST_CASE("rpmemd refuses to serve without TLS material, naming what is missing") {
    TempDir dir;
    dir.write("rpmemd.conf", "poolset-dir = " + dir.path().string() + "\n");
    auto refused = rpmemd({"--config", dir / "rpmemd.conf"});
    CHECK(refused.status == EINVAL);
    CHECK_THAT(refused.err, Catch::Contains("tls-ca is not set"));
}
