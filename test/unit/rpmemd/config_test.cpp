// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "rpmemd/supervisor/config.h"
#include "temp_dir.h"

using namespace rpmem::daemon;
using rpmem::persist::PersistenceDomain;

using rpmem::test::TempDir;

namespace {

rpmem::Result<CommandLine> parse(std::vector<const char*> args) {
    args.insert(args.begin(), "rpmemd");
    return parse_command_line(static_cast<int>(args.size()), args.data());
}

const char* const kTls = "tls-ca = /etc/rpmem/ca.crt\n"
                         "tls-cert = /etc/rpmem/server.crt\n"
                         "tls-key = /etc/rpmem/server.key\n";

} // namespace

TEST_CASE("PMDK's config keys keep their meaning") {
    Config config;
    auto applied = apply_config_text("# rpmemd.conf from PMDK\n"
                                     "poolset-dir = /srv/pools   # trailing comment\n"
                                     "persist-apm = yes\n"
                                     "persist-general = no\n"
                                     "use-syslog = no\n"
                                     "log-file = /var/log/rpmemd.log\n"
                                     "\n"
                                     "   log-level   =   info\n",
                                     "rpmemd.conf", config);
    REQUIRE(applied);
    CHECK(config.poolset_dir == "/srv/pools");
    CHECK(config.methods.allow_apm);
    CHECK_FALSE(config.methods.allow_gpspm);
    CHECK_FALSE(config.use_syslog);
    CHECK(config.log_file == "/var/log/rpmemd.log");
    CHECK(config.log_level == LogLevel::info);
}

TEST_CASE("naming any persist-* key allows only the methods it sets to yes") {
    // The methods one config file holding `text` allows.
    const auto methods_of = [](const char* text) {
        Config config;
        REQUIRE(apply_config_text(text, "rpmemd.conf", config));
        return config.methods;
    };
    // load_config with kTls and `persist_keys` in the system file, `arguments` on the command
    // line.
    const auto load_with = [](const std::string& persist_keys, std::vector<const char*> arguments) {
        TempDir dir;
        auto system_file = dir.write("system.conf", std::string(kTls) + persist_keys);
        ConfigSources sources{.home = "/h", .system_file = system_file};
        auto command_line = parse(std::move(arguments));
        REQUIRE(command_line);
        return load_config(*command_line, sources);
    };
    SECTION("no key: gpspm and commit, not apm") {
        const auto methods = methods_of("poolset-dir = /srv/pools\n");
        CHECK_FALSE(methods.keys_named);
        CHECK_FALSE(methods.allow_apm);
        CHECK(methods.allow_gpspm);
        CHECK(methods.allow_commit);
    }
    SECTION("persist-general = yes alone: gpspm only") {
        const auto methods = methods_of("persist-general = yes\n");
        CHECK(methods.keys_named);
        CHECK_FALSE(methods.allow_apm);
        CHECK(methods.allow_gpspm);
        CHECK_FALSE(methods.allow_commit);
    }
    SECTION("keys add up across files and the command line") {
        auto config = load_with("persist-general = yes\n", {"--persist-commit"});
        REQUIRE(config);
        CHECK(config->methods.allow_gpspm);
        CHECK(config->methods.allow_commit);
        CHECK_FALSE(config->methods.allow_apm);
    }
    SECTION("keys that enable nothing are an error") {
        auto config = load_with("persist-general = no\n", {});
        REQUIRE_FALSE(config);
        CHECK_THAT(config.error().message(), Catch::Contains("sets none of them to yes"));
    }
}

TEST_CASE("the keys rpmemd adds: TLS, access, fabric, platform") {
    Config config;
    auto applied = apply_config_text("listen = [::1]:7000\n"
                                     "tls-ca = /a/ca.crt\ntls-cert = /a/s.crt\ntls-key = /a/s.key\n"
                                     "allow-client = alice, bob\nallow-client = carol\n"
                                     "client-poolset-dir = alice /srv/alice\n"
                                     "allow-provider = tcp verbs\n"
                                     "persistence-domain = eadr\n"
                                     "nic-writes-bypass-cache = yes\n"
                                     "platform-type = test box\n"
                                     "persist-commit = no\n"
                                     "max-lanes = 8\nmax-sessions = 3\nnthreads = 2\n"
                                     "heartbeat = 500ms\nsession-timeout = 3s\n"
                                     "fabric-address = 10.0.0.2\n"
                                     "inject-reply-delay = 500us\n",
                                     "f.conf", config);
    REQUIRE(applied);
    CHECK(config.listen_host == "::1");
    CHECK(config.listen_port == 7000);
    CHECK(config.allowed_clients == std::vector<std::string>{"alice", "bob", "carol"});
    CHECK(config.client_poolset_dirs.at("alice") == "/srv/alice");
    CHECK(config.allowed_providers == std::vector<std::string>{"tcp", "verbs"});
    CHECK(config.platform.domain == PersistenceDomain::eadr);
    CHECK(config.platform.nic_writes_bypass_cache);
    CHECK(config.platform.type == "test box");
    CHECK_FALSE(config.methods.allow_commit);
    CHECK(config.max_lanes == 8);
    CHECK(config.max_sessions == 3);
    CHECK(config.nthreads == 2);
    CHECK(config.heartbeat == std::chrono::milliseconds(500));
    CHECK(config.session_timeout == std::chrono::seconds(3));
    CHECK(config.fabric_host == "10.0.0.2");
    CHECK(config.inject_reply_delay == std::chrono::microseconds(500));

    Config defaults;
    REQUIRE(apply_config_text("listen = example.org\n", "g.conf", defaults));
    CHECK(defaults.listen_port == kDefaultPort);
    CHECK(defaults.inject_reply_delay == std::chrono::microseconds(0));
}

TEST_CASE("bad lines and values are errors naming the file and line") {
    struct Case {
        const char* text;
        const char* expected;
    };
    auto [text, expected] = GENERATE(
        Case{"poolset-dir = /x\nbogus\n", "my.conf:2: expected 'key = value', got 'bogus'"},
        Case{"\n\nfrobnicate = 1\n", "my.conf:3: unknown key 'frobnicate'"},
        Case{"use-syslog = maybe\n", "my.conf:1: use-syslog: expected yes or no"},
        Case{"log-level = loud\n", "my.conf:1: log-level: expected one of err"},
        Case{"max-lanes = 0\n", "my.conf:1: max-lanes: expected a whole number from 1 to 1024"},
        Case{"max-lanes = 12x\n", "my.conf:1: max-lanes: expected a whole number"},
        Case{"heartbeat = 2h\n", "my.conf:1: heartbeat: expected a duration"},
        Case{"heartbeat = 0s\n", "my.conf:1: heartbeat: expected a duration"},
        Case{"inject-reply-delay = 2s\n", "my.conf:1: inject-reply-delay: expected a duration"},
        Case{"listen = alice@host\n", "my.conf:1: listen: expected HOST[:PORT] without a user"},
        Case{"listen = host:99999\n", "my.conf:1: listen:"},
        Case{"persistence-domain = flash\n", "my.conf:1: persistence-domain: expected 'adr'"},
        Case{"client-poolset-dir = alice\n", "my.conf:1: client-poolset-dir: expected 'IDENTITY"},
        Case{"poolset-dir =\n", "my.conf:1: poolset-dir: expected a path"});
    Config config;
    auto applied = apply_config_text(text, "my.conf", config);
    REQUIRE_FALSE(applied);
    CHECK(applied.error().errno_value() == EINVAL);
    CHECK_THAT(applied.error().message(), Catch::StartsWith(expected));
}

TEST_CASE("the command line: PMDK's options, modes and errors") {
    auto remove = parse({"--remove", "dir/pool.set", "--force", "-s", "--poolset-dir=/p"});
    REQUIRE(remove);
    CHECK(remove->mode == CommandLine::Mode::remove);
    CHECK(remove->remove_set == "dir/pool.set");
    CHECK(remove->force);
    CHECK(remove->remove_pool_set);
    CHECK(remove->overrides == "poolset-dir = /p\n");

    auto serve = parse({"-c", "/etc/x.conf", "--persist-apm", "--use-syslog=no", "-t", "4",
                        "--log-level", "debug"});
    REQUIRE(serve);
    CHECK(serve->mode == CommandLine::Mode::serve);
    CHECK(serve->config_file == "/etc/x.conf");
    CHECK(serve->overrides ==
          "persist-apm = yes\nuse-syslog = no\nnthreads = 4\nlog-level = debug\n");

    auto help = parse({"-h"});
    REQUIRE(help);
    CHECK(help->mode == CommandLine::Mode::help);

    struct Case {
        std::vector<const char*> args;
        const char* expected;
    };
    auto [args, expected] = GENERATE(
        Case{{"--bogus"}, "not expected: --bogus (see rpmemd --help)"},
        Case{{"-x"}, "not expected: -x"}, Case{{"stray"}, "not expected: stray"},
        Case{{"--remove"}, "--remove: 1 required"}, Case{{"--force"}, "--force requires --remove"},
        Case{{"--pool-set", "-c", "x"}, "--pool-set requires --remove"},
        Case{{"--force=yes", "-r", "x"}, "disallowed flag override"},
        Case{{"--log-file", "a#b"}, "value may not contain '#'"});
    auto result = parse(args);
    REQUIRE_FALSE(result);
    CHECK_THAT(result.error().message(), Catch::Contains(expected));
}

TEST_CASE("load_config: files in order, the command line wins, $HOME expands") {
    TempDir dir;
    auto system_file = dir.write(
        "system.conf", std::string(kTls) + "poolset-dir = /srv/system\nlog-level = warn\n");
    auto user_file = dir.write("user.conf", "poolset-dir = $HOME/pools\nmax-lanes = 4\n");
    ConfigSources sources{
        .home = "/home/alice", .system_file = system_file, .user_file = user_file};
    // load_config of `sources` and of a command line that must parse.
    const auto load_with_arguments = [&sources](std::vector<const char*> arguments) {
        auto command_line = parse(std::move(arguments));
        REQUIRE(command_line);
        return load_config(*command_line, sources);
    };

    auto config = load_with_arguments({"--max-lanes", "2"});
    REQUIRE(config);
    CHECK(config->poolset_dir == "/home/alice/pools");
    CHECK(config->log_level == LogLevel::warn);
    CHECK(config->max_lanes == 2);

    SECTION("missing default files are fine, a missing --config file is not") {
        ConfigSources none{.home = "/h", .system_file = (dir.path() / "absent").string()};
        auto remove = parse({"--remove", "x.set"});
        REQUIRE(remove);
        auto defaults = load_config(*remove, none);
        REQUIRE(defaults);
        CHECK(defaults->poolset_dir == "/h");

        auto explicit_missing = parse({"--config", (dir.path() / "absent.conf").c_str()});
        REQUIRE(explicit_missing);
        auto failed = load_config(*explicit_missing, none);
        REQUIRE_FALSE(failed);
        CHECK(failed.error().errno_value() == ENOENT);
        CHECK_THAT(failed.error().message(), Catch::Contains("absent.conf"));
    }

    SECTION("only --config is read when given") {
        auto only = dir.write("only.conf", std::string(kTls) + "poolset-dir = /only\n");
        auto loaded = load_with_arguments({"--config", only.c_str()});
        REQUIRE(loaded);
        CHECK(loaded->poolset_dir == "/only");
        CHECK(loaded->max_lanes == Config{}.max_lanes);
    }

    SECTION("$HOME only as a whole path component") {
        auto odd = dir.write("odd.conf", std::string(kTls) + "poolset-dir = /x/$HOMEDIR\n");
        auto loaded = load_with_arguments({"--config", odd.c_str()});
        REQUIRE(loaded);
        CHECK(loaded->poolset_dir == "/x/$HOMEDIR");
    }

    SECTION("serving needs TLS files and an absolute poolset-dir") {
        auto no_tls = dir.write("no-tls.conf", "poolset-dir = /srv\n");
        auto failed = load_with_arguments({"--config", no_tls.c_str()});
        REQUIRE_FALSE(failed);
        CHECK_THAT(failed.error().message(), Catch::Contains("tls-ca is not set"));

        auto bad = load_with_arguments({"--config", no_tls.c_str(), "--poolset-dir", "pools"});
        REQUIRE_FALSE(bad);
        CHECK_THAT(bad.error().message(), Catch::Contains("poolset-dir must be an absolute path"));
    }

    SECTION("an error in a file names the file and line") {
        auto broken = dir.write("broken.conf", "poolset-dir = /x\n\nlog-level = chatty\n");
        auto failed = load_with_arguments({"--config", broken.c_str()});
        REQUIRE_FALSE(failed);
        CHECK_THAT(failed.error().message(),
                   Catch::StartsWith(broken.string() + ":3: log-level: expected one of"));
    }
}

TEST_CASE("listen on port 0 takes any free port; port-file names where to write it") {
    for (auto [text, host] : {std::pair{"127.0.0.1:0", "127.0.0.1"}, std::pair{"[::1]:0", "::1"},
                              std::pair{"localhost:0", "localhost"}}) {
        CAPTURE(text);
        Config config;
        REQUIRE(apply_config_text(std::string("listen = ") + text + "\nport-file = /run/p\n",
                                  "t.conf", config));
        CHECK(config.listen_host == host);
        CHECK(config.listen_port == 0);
        CHECK(config.port_file == "/run/p");
    }
    Config unbracketed;
    REQUIRE(apply_config_text("listen = fe80::0\n", "t.conf", unbracketed));
    CHECK(unbracketed.listen_host == "fe80::0"); // an IPv6 address, not port 0
    CHECK(unbracketed.listen_port == kDefaultPort);

    auto line = parse({"--listen", "127.0.0.1:0", "--port-file=/tmp/port"});
    REQUIRE(line);
    CHECK_THAT(line->overrides, Catch::Contains("port-file = /tmp/port"));
}

TEST_CASE("the shipped example config is valid") {
    std::ifstream in(RPMEMD_CONF_EXAMPLE);
    REQUIRE(in);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Config config;
    auto applied = apply_config_text(text, "rpmemd.conf.example", config);
    INFO((applied ? std::string() : applied.error().message()));
    REQUIRE(applied);
    CHECK(config.poolset_dir == "/var/lib/rpmem/pools");
    CHECK(config.listen_port == kDefaultPort);
    CHECK(config.heartbeat == std::chrono::seconds(10));
}

TEST_CASE("admission limits: keys, defaults and their consistency") {
    Config config;
    CHECK(config.max_pending_connections == 128);
    CHECK(config.max_pending_per_source == 16);
    CHECK(effective_max_sessions_per_client(config) == 64); // a quarter of 256
    config.max_sessions = 3;
    CHECK(effective_max_sessions_per_client(config) == 1);

    REQUIRE(apply_config_text("max-sessions-per-client = 5\nmax-pending-connections = 500\n"
                              "max-pending-per-source = 20\n",
                              "test.conf", config));
    CHECK(effective_max_sessions_per_client(config) == 5);
    CHECK(config.max_pending_connections == 500);
    CHECK(config.max_pending_per_source == 20);
    CHECK_FALSE(apply_config_text("max-pending-per-source = 0\n", "test.conf", config));

    TempDir dir;
    ConfigSources none{.home = "/h", .system_file = (dir.path() / "absent").string()};
    auto file = dir.write("a.conf", std::string(kTls) + "poolset-dir = /srv\n"
                                                        "max-pending-connections = 8\n"
                                                        "max-pending-per-source = 9\n");
    auto command_line = parse({"--config", file.c_str()});
    REQUIRE(command_line);
    auto failed = load_config(*command_line, none);
    REQUIRE_FALSE(failed);
    CHECK_THAT(failed.error().message(), Catch::Contains("max-pending-per-source"));

    auto over = parse({"--config", file.c_str(), "--max-pending-per-source", "8", "--max-sessions",
                       "4", "--max-sessions-per-client", "5"});
    REQUIRE(over);
    failed = load_config(*over, none);
    REQUIRE_FALSE(failed);
    CHECK_THAT(failed.error().message(), Catch::Contains("max-sessions-per-client"));

    auto usage = usage_text();
    CHECK_THAT(usage, Catch::Contains("max-pending-connections"));
    CHECK_THAT(usage, Catch::Contains("max-pending-per-source"));
    CHECK_THAT(usage, Catch::Contains("max-sessions-per-client"));
}
