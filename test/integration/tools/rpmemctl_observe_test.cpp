// SPDX-License-Identifier: BSD-3-Clause
// What an operator watches, against the real rpmemd: `rpmemctl status --json` (its schema),
// `rpmemctl events` (JSON lines of real sessions: opened, state changes, a session lost, a
// refusal), and /metrics scraped over HTTP and checked by Prometheus' own promtool.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "channel/client.h"
#include "client/replica.h"
#include "client_settings.h"
#include "protocol/request.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using nlohmann::json;

namespace {

RunResult rpmemctl(const EnvironmentChanges& environment, std::vector<std::string> args) {
    args.insert(args.begin(), required_environment("RPMEMCTL"));
    return run(args, environment);
}

// The environment of a client with `tls` instead of the test's own credentials.
EnvironmentChanges environment_of(TargetHost& host, const channel::TlsFiles& tls) {
    auto environment = host.client_environment();
    environment["RPMEM_TLS_CERT"] = tls.certificate.string();
    environment["RPMEM_TLS_KEY"] = tls.private_key.string();
    return environment;
}

std::set<std::string> keys_of(const json& object) {
    std::set<std::string> keys;
    for (const auto& [key, value] : object.items())
        keys.insert(key);
    return keys;
}

std::vector<json> json_lines(const std::string& text) {
    std::vector<json> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        lines.push_back(json::parse(line));
    return lines;
}

// GET `path` from 127.0.0.1:`port` over HTTP/1.0; the whole response, headers and body.
std::string http_get(std::uint16_t port, const std::string& path) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    REQUIRE(::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
    std::string response;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;)
        response.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
    return response;
}

std::uint16_t read_port(const std::string& file) {
    std::ifstream in(file);
    unsigned port = 0;
    in >> port;
    return static_cast<std::uint16_t>(port);
}

protocol::CreateRequest create_request(const std::string& pool_set) {
    protocol::CreateRequest create;
    create.pool_set = pool_set;
    create.lanes = 1;
    create.attributes = pmemobj_attributes();
    return create;
}

} // namespace

TEST_CASE("status, events and metrics of real sessions") {
    TempDir scratch("observe");
    const std::string metrics_port_file = scratch / "metrics.port";
    TargetHost host(
        {.config_lines = {"metrics-listen = 127.0.0.1:0",
                          "metrics-port-file = " + metrics_port_file, "admin-client = operator"}});
    host.write_set("pool.set", "pool", 1);
    host.write_set("other.set", "other", 1);
    const std::string target = host.target();
    const auto alice = host.client_environment();
    const auto bob_tls = host.client_tls("bob");
    const auto bob = environment_of(host, bob_tls);
    const auto operator_env = environment_of(host, host.client_tls("operator"));

    // alice holds pool.set open; bob holds other.set open.
    auto alice_session = host.client();
    REQUIRE(channel::expect<protocol::CreateReply>(alice_session->call(create_request("pool.set")),
                                                   "create"));
    auto bob_session = host.connect(bob_tls);
    REQUIRE(bob_session);
    REQUIRE(channel::expect<protocol::CreateReply>(
        (*bob_session)->call(create_request("other.set")), "create"));

    SECTION("status --json: its schema, and each identity sees its own sessions") {
        auto mine = rpmemctl(alice, {"status", target, "--json"});
        INFO(mine.err);
        REQUIRE(mine.status == 0);
        json status = json::parse(mine.out);
        // The documented schema: a renamed or dropped field fails here.
        CHECK(keys_of(status) ==
              std::set<std::string>{"target", "daemon", "all_identities", "sessions"});
        CHECK(keys_of(status["daemon"]) ==
              std::set<std::string>{"software", "protocol_version", "uptime_seconds", "sessions",
                                    "max_sessions", "max_sessions_per_client",
                                    "pending_connections", "max_pending_connections", "workers",
                                    "pools_in_use"});
        CHECK(status["target"] == target);
        CHECK(status["all_identities"] == false);
        CHECK(status["daemon"]["sessions"].get<int>() >= 3); // alice, bob, this one
        CHECK(status["daemon"]["workers"].get<int>() == 2);  // one per identity with a pool
        CHECK(status["daemon"]["pools_in_use"] == 2);
        // alice's two sessions: the one holding pool.set and rpmemctl's own.
        REQUIRE(status["sessions"].size() == 2);
        const json& holder = status["sessions"][0];
        CHECK(keys_of(holder) == std::set<std::string>{"id", "identity", "peer", "connected_ms",
                                                       "pool_set", "replica", "data_path",
                                                       "persisted", "resync", "asynchronous"});
        CHECK(keys_of(holder["replica"]) == std::set<std::string>{"state", "generation"});
        CHECK(keys_of(holder["data_path"]) ==
              std::set<std::string>{"provider", "persist_method", "method_reason", "lanes"});
        CHECK(keys_of(holder["persisted"]) ==
              std::set<std::string>{"messages", "bytes", "latency_p50_ns", "latency_p99_ns"});
        CHECK(keys_of(holder["resync"]) ==
              std::set<std::string>{"active", "done_bytes", "total_bytes"});
        CHECK(keys_of(holder["asynchronous"]) ==
              std::set<std::string>{"active", "messages", "lag_bytes", "max_lag_bytes"});
        CHECK(holder["asynchronous"]["active"] == false); // a synchronous client
        CHECK(holder["identity"] == "alice");
        CHECK(holder["pool_set"] == "pool.set");
        CHECK(holder["replica"]["state"] == "inconsistent");
        CHECK(holder["replica"]["generation"] == 1);
        CHECK(holder["data_path"]["lanes"] == 1);
        CHECK(holder["data_path"]["provider"] != "");
        CHECK(status["sessions"][1]["pool_set"].is_null());

        auto all = rpmemctl(operator_env, {"status", target, "--json"});
        REQUIRE(all.status == 0);
        json everything = json::parse(all.out);
        CHECK(everything["all_identities"] == true);
        std::set<std::string> pool_sets;
        for (const auto& session : everything["sessions"])
            if (!session["pool_set"].is_null())
                pool_sets.insert(session["pool_set"].get<std::string>());
        CHECK(pool_sets == std::set<std::string>{"pool.set", "other.set"});

        auto text = rpmemctl(alice, {"status", target});
        REQUIRE(text.status == 0);
        CHECK_THAT(text.out, Catch::Contains("pool set pool.set: inconsistent at generation 1"));
        CHECK_THAT(text.out, !Catch::Contains("other.set"));
    }

    SECTION("events: history of real sessions, a lost one, a refusal; each identity its own") {
        // A refusal: create of a set that does not exist.
        auto refused = channel::expect<protocol::CreateReply>(
            alice_session->call(create_request("missing.set")), "create");
        REQUIRE_FALSE(refused);
        // bob's session ends without closing its pool: lost, the replica left inconsistent.
        const std::size_t lost_before = host.log_count("releasing pool set 'other.set'");
        bob_session->reset();
        REQUIRE(host.wait_for_log("releasing pool set 'other.set'", lost_before + 1));

        auto history = rpmemctl(alice, {"events", target, "--history", "--once"});
        INFO(history.err);
        REQUIRE(history.status == 0);
        std::vector<std::string> kinds;
        for (const json& line : json_lines(history.out)) {
            CHECK(line["identity"] == "alice");
            CHECK(line.contains("sequence"));
            CHECK(line["time"].get<std::string>().ends_with("Z"));
            kinds.push_back(line["kind"]);
        }
        CHECK(std::count(kinds.begin(), kinds.end(), "session_opened") >= 1);
        CHECK(std::count(kinds.begin(), kinds.end(), "state_changed") == 1);
        CHECK(std::count(kinds.begin(), kinds.end(), "refused") == 1);
        CHECK(std::count(kinds.begin(), kinds.end(), "session_lost") == 0);

        auto seen_by_bob = rpmemctl(bob, {"events", target, "--history", "--once"});
        REQUIRE(seen_by_bob.status == 0);
        bool lost = false;
        for (const json& line : json_lines(seen_by_bob.out)) {
            CHECK(line["identity"] == "bob");
            if (line["kind"] == "session_lost") {
                lost = true;
                CHECK(line["pool_set"] == "other.set");
            }
            // "... uncleanly", or "... uncleanly while in sync" (a consistent copy it found).
            if (line["kind"] == "state_changed" &&
                line["reason"].get<std::string>().starts_with("the session ended uncleanly"))
                CHECK(line["state"] == "inconsistent");
        }
        CHECK(lost);

        // Without --history: the sessions as they are ("exists"), nothing of the past.
        auto now = rpmemctl(alice, {"events", target, "--once"});
        REQUIRE(now.status == 0);
        auto lines = json_lines(now.out);
        REQUIRE_FALSE(lines.empty());
        for (const json& line : lines)
            CHECK(line["kind"] == "exists");
        CHECK(lines[0]["session"]["pool_set"] == "pool.set");
    }

    SECTION("metrics over HTTP, valid for promtool") {
        const std::uint16_t port = read_port(metrics_port_file);
        REQUIRE(port != 0);
        const std::string response = http_get(port, "/metrics");
        REQUIRE_THAT(response,
                     Catch::StartsWith("HTTP/1.0 200") || Catch::StartsWith("HTTP/1.1 200"));
        CHECK_THAT(response, Catch::Contains("Content-Type: text/plain; version=0.0.4"));
        const std::string body = response.substr(response.find("\r\n\r\n") + 4);
        CHECK_THAT(body, Catch::Contains("\nrpmemd_workers 2\n"));
        CHECK_THAT(body, Catch::Contains("\nrpmemd_pools_in_use 2\n"));
        CHECK_THAT(body,
                   Catch::Contains("rpmemd_replica_state{pool_set=\"pool.set\",identity=\"alice\","
                                   "state=\"inconsistent\"} 1\n"));
        CHECK_THAT(body, Catch::Contains("rpmemd_persist_latency_seconds_bucket{le=\"+Inf\"}"));

        const std::string file = scratch / "metrics.txt";
        std::ofstream(file) << body;
        auto checked = run({"sh", "-c", "promtool check metrics < '" + file + "'"});
        INFO(checked.output());
        CHECK(checked.status == 0);

        CHECK_THAT(http_get(port, "/other"), Catch::StartsWith("HTTP/1.0 404"));
    }
}

TEST_CASE("status and metrics count what a real data path persisted") {
    TempDir scratch("observe-counted");
    const std::string metrics_port_file = scratch / "metrics.port";
    TargetHost host({.config_lines = {"metrics-listen = 127.0.0.1:0",
                                      "metrics-port-file = " + metrics_port_file}});
    constexpr std::size_t kPoolBytes = 8 << 20;
    host.write_set("counted.set", "PMEMPOOLSET\n8M " + (host.dir() / "counted.0").string() + "\n");

    // An initiator's pool, replicated through the client library's lanes (inline persists,
    // as libpmemobj makes them): 12 persists of 64 KiB.
    std::vector<std::byte> memory(kPoolBytes + 4096);
    auto* aligned = reinterpret_cast<std::byte*>(
        (reinterpret_cast<std::uintptr_t>(memory.data()) + 4095) & ~std::uintptr_t{4095});
    const std::span<std::byte> pool(aligned, kPoolBytes);
    const client::Settings settings = client_settings(host.credentials().client());
    unsigned lanes = 1;
    PoolAttributes attributes = pmemobj_attributes();
    auto replica = client::Replica::create(settings, Target{"", "127.0.0.1", host.port()},
                                           "counted.set", pool, lanes, &attributes);
    INFO((replica ? std::string() : replica.error().message()));
    REQUIRE(replica);
    constexpr std::size_t kPersists = 12;
    constexpr std::size_t kBytes = 64 << 10;
    for (std::size_t i = 0; i < kPersists; ++i) {
        std::memset(aligned + 4096 + i * kBytes, static_cast<int>(i + 1), kBytes);
        REQUIRE((*replica)->persist(4096 + i * kBytes, kBytes, 0, client::PersistMode::strict));
    }

    auto listed = rpmemctl(host.client_environment(), {"status", host.target(), "--json"});
    INFO(listed.err);
    REQUIRE(listed.status == 0);
    const json status = json::parse(listed.out);
    bool found = false;
    for (const json& session : status["sessions"]) {
        if (session["pool_set"] != "counted.set")
            continue;
        found = true;
        CAPTURE(session.dump());
        CHECK(session["persisted"]["messages"].get<std::uint64_t>() >= kPersists);
        CHECK(session["persisted"]["bytes"].get<std::uint64_t>() >= kPersists * kBytes);
        CHECK(session["persisted"]["latency_p50_ns"].get<std::uint64_t>() > 0);
        CHECK(session["persisted"]["latency_p50_ns"].get<std::uint64_t>() <=
              session["persisted"]["latency_p99_ns"].get<std::uint64_t>());
    }
    CHECK(found);

    // The daemon's totals keep them after the session closed.
    REQUIRE((*replica)->close());
    const std::string response = http_get(read_port(metrics_port_file), "/metrics");
    std::uint64_t persists_total = 0;
    std::istringstream lines(response);
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with("rpmemd_persists_total "))
            persists_total = std::stoull(line.substr(line.find(' ') + 1));
    CHECK(persists_total >= kPersists);
}
