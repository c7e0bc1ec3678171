// SPDX-License-Identifier: BSD-3-Clause
// rpmemctl init, status, create, info and remove as a user runs them: the real rpmemctl binary
// against the real rpmemd, with the credentials `rpmemctl init` makes.
#include <filesystem>

#include <catch2/catch.hpp>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel/client.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;

namespace {

RunResult rpmemctl(std::vector<std::string> args, const EnvironmentChanges& environment = {}) {
    args.insert(args.begin(), required_environment("RPMEMCTL"));
    return run(args, environment);
}

RunResult rpmemctl(TargetHost& host, const std::vector<std::string>& args) {
    return rpmemctl(args, host.client_environment());
}

unsigned mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

} // namespace

TEST_CASE("rpmemctl init makes working credentials and says how to use them") {
    TempDir dir;
    std::string tls = dir / "tls";
    auto made = rpmemctl({"init", tls, "--server-name", "127.0.0.1", "--client-name=carol"});
    INFO(made.err);
    REQUIRE(made.status == 0);
    for (const char* file : {"ca.crt", "server.crt", "client.crt"})
        CHECK(mode_of(tls + "/" + file) == 0644);
    CHECK(mode_of(tls + "/server.key") == 0600);
    CHECK(mode_of(tls + "/client.key") == 0600);
    CHECK_FALSE(std::filesystem::exists(tls + "/ca.key"));
    CHECK_THAT(made.out, Catch::Contains("tls-ca = " + tls + "/ca.crt"));
    CHECK_THAT(made.out, Catch::Contains("tls-key = " + tls + "/server.key"));
    CHECK_THAT(made.out, Catch::Contains("export RPMEM_TLS_CERT=" + tls + "/client.crt"));
    CHECK_THAT(made.out, Catch::Contains("identity 'carol'"));

    // Not again without --force.
    auto again = rpmemctl({"init", tls});
    CHECK(again.status == 1);
    CHECK_THAT(again.err, Catch::Contains("--force"));
    CHECK(rpmemctl({"init", tls, "--server-name", "127.0.0.1", "--client-name", "carol", "--force"})
              .status == 0);

    // rpmemd serves with them; the client certificate is carol's; the server certificate names
    // only 127.0.0.1.
    TargetHost host(
        {.config_lines = {"tls-ca = " + tls + "/ca.crt", "tls-cert = " + tls + "/server.crt",
                          "tls-key = " + tls + "/server.key"}});
    channel::TlsFiles client{tls + "/ca.crt", tls + "/client.crt", tls + "/client.key"};
    auto connected = host.connect(client);
    INFO((connected ? std::string() : connected.error().message()));
    REQUIRE(connected);
    CHECK((*connected)->hello().identity == "carol");
    auto by_name = host.connect(client, "localhost");
    REQUIRE_FALSE(by_name);
    CHECK(by_name.error().errno_value() == EACCES);
}

TEST_CASE("rpmemctl init defaults: this host's names and the user's name") {
    TempDir dir;
    auto made = rpmemctl({"init", dir / "tls"});
    INFO(made.err);
    REQUIRE(made.status == 0);
    char host[256] = {};
    REQUIRE(::gethostname(host, sizeof(host) - 1) == 0);
    CHECK_THAT(made.out, Catch::Contains(std::string("for: ") + host));
    CHECK_THAT(made.out, Catch::Contains("localhost 127.0.0.1 ::1"));
    const passwd* user = ::getpwuid(::geteuid());
    REQUIRE(user != nullptr);
    CHECK_THAT(made.out, Catch::Contains(std::string("identity '") + user->pw_name + "'"));
}

TEST_CASE("rpmemctl status, create, info and remove against rpmemd") {
    TargetHost host;
    host.write_set("bare.set", "bare", 1, "NOHDRS");
    host.write_set("pool.set", "pool", 2);
    std::string target = host.target();

    auto status = rpmemctl(host, {"status", target});
    INFO(status.err);
    REQUIRE(status.status == 0);
    CHECK_THAT(status.out, Catch::Contains("rpmemd ") && Catch::Contains("sessions: 1"));

    auto bare = rpmemctl(host, {"create", target, "bare.set"});
    INFO(bare.err);
    CHECK(bare.status == 0);
    CHECK_THAT(bare.out, Catch::Contains("2 MiB") && Catch::Contains("no headers"));
    CHECK(mode_of(host.dir() / "bare.0") == 0600);

    auto created = rpmemctl(
        host, {"create", "alice@" + target, "pool.set", "--signature", "PMEMTEST", "--size", "3M"});
    INFO(created.err);
    REQUIRE(created.status == 0);
    CHECK_THAT(created.out, Catch::Contains("signature PMEMTEST"));

    auto info = rpmemctl(host, {"info", target, "pool.set"});
    INFO(info.err);
    REQUIRE(info.status == 0);
    CHECK_THAT(info.out, Catch::Contains("pool size: 4092 KiB (4190208 bytes)"));
    CHECK_THAT(info.out, Catch::Contains("signature: PMEMTEST"));
    CHECK_THAT(info.out, Catch::Contains("major: 1"));
    // Created and closed with nothing written: no initiator vouched for it yet. Asking does not
    // change that.
    CHECK_THAT(info.out, Catch::Contains("replica: outdated, generation 1"));
    auto json = rpmemctl(host, {"info", target, "bare.set", "--json"});
    REQUIRE(json.status == 0);
    CHECK_THAT(json.out,
               Catch::Contains("\"pool_size\":2097152") && Catch::Contains("\"headers\":false"));
    CHECK_THAT(json.out,
               Catch::Contains("\"state\":\"outdated\"") && Catch::Contains("\"generation\":1"));
    auto again = rpmemctl(host, {"info", target, "bare.set", "--json"});
    CHECK_THAT(again.out, Catch::Contains("\"state\":\"outdated\""));

    // Failures from the daemon come back as exit 1 and its message.
    auto exists = rpmemctl(host, {"create", target, "pool.set", "--signature", "X"});
    CHECK(exists.status == 1);
    CHECK_THAT(exists.err, Catch::Contains("already holds data"));
    // The part is named, the server's directories are not.
    CHECK_THAT(exists.err, Catch::Contains("'pool.0'") && !Catch::Contains(host.dir().path()));
    // Without --signature on a set with headers: what to add.
    host.write_set("fresh.set", "fresh", 1);
    auto unsigned_create = rpmemctl(host, {"create", target, "fresh.set"});
    CHECK(unsigned_create.status == 1);
    CHECK_THAT(unsigned_create.err,
               Catch::Contains("add --signature SIG") && Catch::Contains("OPTION NOHDRS"));
    auto mismatch = rpmemctl(host, {"create", target, "bare.set", "--signature", "X"});
    CHECK(mismatch.status == 1);
    // The create above closed pool.set once already: the holder's close is the next one.
    const std::size_t closed = host.log_count("pool set 'pool.set' closed");
    {
        auto holder = host.client();
        protocol::OpenRequest open;
        open.pool_set = "pool.set";
        open.lanes = 1;
        REQUIRE(channel::expect<protocol::OpenReply>(holder->call(open), "open"));
        auto busy = rpmemctl(host, {"info", target, "pool.set"});
        CHECK(busy.status == 1);
        CHECK_THAT(busy.err, Catch::Contains("in use"));
        auto listed = rpmemctl(host, {"status", target, "--json"});
        REQUIRE(listed.status == 0);
        CHECK_THAT(listed.out, Catch::Contains("\"pool_set\":\"pool.set\""));
    }
    REQUIRE(host.wait_for_log("pool set 'pool.set' closed", closed + 1));

    auto removed = rpmemctl(host, {"remove", target, "pool.set", "--pool-set"});
    INFO(removed.err);
    CHECK(removed.status == 0);
    CHECK_FALSE(std::filesystem::exists(host.dir() / "pool.0"));
    CHECK_FALSE(std::filesystem::exists(host.sets_dir() + "/pool.set"));
    auto gone = rpmemctl(host, {"remove", target, "pool.set"});
    CHECK(gone.status == 1);
    CHECK_THAT(gone.err, Catch::Contains("pool.set"));
    CHECK(rpmemctl(host, {"remove", target, "bare.set", "--force"}).status == 0);
}

TEST_CASE("persist-general = yes alone leads to gpspm on tcp, and rpmemd's log says why") {
    // On "persistent memory" (forced) and tcp, commit is valid and the fastest: the default
    // picks it; naming only persist-general leaves gpspm alone allowed.
    apply_environment({{"PMEM_IS_PMEM_FORCE", "1"}});
    for (const auto& [lines, method] :
         {std::pair{std::vector<std::string>{}, std::string("commit")},
          std::pair{std::vector<std::string>{"persist-general = yes"}, std::string("gpspm")}}) {
        CAPTURE(lines, method);
        TargetHost host({.config_lines = lines});
        host.write_set("pool.set", "pool", 1);
        EnvironmentChanges environment = host.client_environment();
        environment["RPMEM_PROVIDER"] = "tcp";
        const std::string target = host.target();
        auto created =
            rpmemctl({"create", target, "pool.set", "--signature", "PMEMTEST"}, environment);
        INFO(created.err);
        REQUIRE(created.status == 0);
        auto info = rpmemctl({"info", target, "pool.set", "--json"}, environment);
        INFO(info.err);
        REQUIRE(info.status == 0);
        CHECK_THAT(info.out, Catch::Contains("\"persist_method\":\"" + method + "\""));
        CHECK(host.wait_for_log("persistence method " + method + ": "));
        if (method == "gpspm")
            CHECK(host.wait_for_log("passed over: commit is not enabled: the configuration names "
                                    "persist-* keys, and not persist-commit = yes"));
    }
    apply_environment({{"PMEM_IS_PMEM_FORCE", std::nullopt}});
}

TEST_CASE("rpmemctl's remote commands: usage errors and missing credentials") {
    for (std::vector<std::string> args : {std::vector<std::string>{"status"},
                                          {"create", "host"},
                                          {"create", "h", "s", "--major", "2"},
                                          {"info", "h"},
                                          {"remove", "h", "s", "--bogus"},
                                          {"init"},
                                          {"status", "h", "x"}}) {
        CAPTURE(args);
        CHECK(rpmemctl(args).status == 2);
    }
    TempDir dir;
    dir.write("client.conf", "");
    auto no_tls = rpmemctl({"status", "127.0.0.1:1"}, {{"RPMEM_CONFIG", dir / "client.conf"},
                                                       {"HOME", dir.path().string()},
                                                       {"RPMEM_TLS_CA", ""}});
    CHECK(no_tls.status == 1);
    CHECK_THAT(no_tls.err, Catch::Contains("RPMEM_TLS_CA"));
    auto bad_target = rpmemctl({"status", "a@b@c"});
    CHECK(bad_target.status == 1);
    CHECK(rpmemctl({"status", "--help"}).status == 0);
}
