// SPDX-License-Identifier: BSD-3-Clause
// Admission through the real rpmemd: a flood of idle TCP connections from one source address
// is held to the per-source limit (each newcomer at the limit takes the place of the source's
// oldest) while a client from another address, or from the same one, is served; at the total limit
// a newcomer evicts the busiest source's oldest pending connection; one identity cannot hold more
// than max-sessions-per-client sessions.
#include <cerrno>
#include <chrono>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "channel/client.h"
#include "source_socket.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using namespace std::chrono_literals;

namespace {

// Idle connections closed on destruction.
struct Flood {
    std::vector<int> fds;
    Flood(const std::string& source, std::uint16_t port, int count) {
        for (int i = 0; i < count; ++i) {
            int fd = connect_from(source, port);
            REQUIRE(fd >= 0);
            fds.push_back(fd);
        }
    }
    ~Flood() {
        for (int fd : fds)
            ::close(fd);
    }
    // How many the server closed, waiting until `expected` are or the deadline passes.
    int closed(int expected, std::chrono::milliseconds within) {
        auto deadline = std::chrono::steady_clock::now() + within;
        std::vector<bool> done(fds.size(), false);
        int count = 0;
        while (count < expected && std::chrono::steady_clock::now() < deadline) {
            for (std::size_t i = 0; i < fds.size(); ++i) {
                if (!done[i] && closed_by_peer(fds[i], 0ms)) {
                    done[i] = true;
                    ++count;
                }
            }
            if (count < expected)
                ::usleep(10'000); // (a poll over all would do; this bounds a failing test)
        }
        for (std::size_t i = 0; i < fds.size(); ++i)
            count += !done[i] && closed_by_peer(fds[i], 0ms);
        return count;
    }
};

void create_and_close(channel::Client& client, const std::string& set) {
    protocol::CreateRequest create;
    create.pool_set = set;
    create.lanes = 1;
    create.attributes = pmemobj_attributes();
    auto created = channel::expect<protocol::CreateReply>(client.call(create), "create");
    INFO((created ? std::string() : created.error().message()));
    REQUIRE(created);
    auto closed =
        channel::expect<protocol::CloseReply>(client.call(protocol::CloseRequest{true}), "close");
    INFO((closed ? std::string() : closed.error().message()));
    REQUIRE(closed);
}

} // namespace

TEST_CASE("idle connections from one source are held to its limit; others get in") {
    TargetHost host({.config_lines = {"max-pending-per-source = 8", "max-pending-connections = 64",
                                      "session-timeout = 60s"}});
    host.write_set("pool.set", "pool", 1);
    Flood flood("127.0.0.2", host.port(), 48);
    // 40 over the limit (the oldest), closed without waiting for the 60 s handshake deadline.
    CHECK(flood.closed(40, 10s) == 40);
    for (std::size_t i = 40; i < flood.fds.size(); ++i)
        CHECK_FALSE(closed_by_peer(flood.fds[i], 0ms));

    // The eight pending ones hold their places, and a client from 127.0.0.1 is served.
    auto client = host.client();
    CHECK(client->hello().identity == "alice");
    create_and_close(*client, "pool.set");
    CHECK(flood.closed(41, 0ms) == 40);
    CHECK(host.wait_for_log("per source address"));
}

TEST_CASE("a client behind a source holding 16 idle connections still connects") {
    // The defaults: 16 pending connections per source. The neighbour shares the client's
    // address (same host, same NAT).
    TargetHost host({.config_lines = {"session-timeout = 60s"}});
    host.write_set("pool.set", "pool", 1);
    Flood neighbour("127.0.0.1", host.port(), 16);
    CHECK(neighbour.closed(1, 0ms) == 0);
    for (int attempt = 0; attempt < 5; ++attempt) {
        auto client = host.connect();
        INFO((client ? std::string() : client.error().message()));
        REQUIRE(client);
        CHECK((*client)->hello().identity == "alice");
        create_and_close(**client, "pool.set");
    }
    // The first took the place of the neighbour's oldest idle connection; once through Hello it
    // no longer counted, so the others found a place free.
    CHECK(neighbour.closed(1, 10s) == 1);
    CHECK(closed_by_peer(neighbour.fds[0], 0ms));
    CHECK(host.wait_for_log("dropped the oldest pending connection from 127.0.0.1"));
}

TEST_CASE("at the total pending limit a newcomer evicts the busiest source's oldest") {
    TargetHost host({.config_lines = {"max-pending-per-source = 6", "max-pending-connections = 8",
                                      "session-timeout = 60s"}});
    host.write_set("pool.set", "pool", 1);
    Flood busiest("127.0.0.2", host.port(), 6);
    Flood other("127.0.0.3", host.port(), 2);
    CHECK(busiest.closed(1, 0ms) == 0);

    auto client = host.client(); // the ninth: one of 127.0.0.2's goes
    create_and_close(*client, "pool.set");
    CHECK(busiest.closed(1, 10s) == 1);
    CHECK(other.closed(1, 0ms) == 0);
    CHECK(host.wait_for_log("dropped the oldest pending connection of the busiest source"));
}

TEST_CASE("one identity holds at most max-sessions-per-client sessions; others still get in") {
    TargetHost host({.config_lines = {"max-sessions = 8", "max-sessions-per-client = 2"}});
    auto first = host.client();
    auto second = host.client();
    auto third = host.connect();
    REQUIRE_FALSE(third);
    CHECK(third.error().errno_value() == EBUSY);
    CHECK_THAT(third.error().message(),
               Catch::Contains("identity 'alice' has reached the limit of 2 sessions"));

    auto bob = host.connect(host.client_tls("bob"));
    INFO((bob ? std::string() : bob.error().message()));
    REQUIRE(bob);
    CHECK((*bob)->hello().identity == "bob");

    // A place given back is alice's again.
    first.reset();
    auto deadline = std::chrono::steady_clock::now() + kPatience;
    Result<std::unique_ptr<channel::Client>> again = host.connect();
    while (!again && std::chrono::steady_clock::now() < deadline) {
        ::usleep(50'000); // the server frees the place once it has seen the close
        again = host.connect();
    }
    CHECK(again);
}

TEST_CASE("the default per-client quota is a quarter of max-sessions") {
    TargetHost host({.config_lines = {"max-sessions = 4"}});
    auto first = host.client();
    auto second = host.connect();
    REQUIRE_FALSE(second);
    CHECK(second.error().errno_value() == EBUSY);
    CHECK_THAT(second.error().message(), Catch::Contains("limit of 1 sessions per client"));
}

TEST_CASE("at the total pending limit a source holding its share is refused at once") {
    TargetHost host({.config_lines = {"max-pending-per-source = 8", "max-pending-connections = 8",
                                      "session-timeout = 60s"}});
    Flood first("127.0.0.2", host.port(), 4);
    Flood second("127.0.0.3", host.port(), 4);
    Flood more("127.0.0.3", host.port(), 1); // 4 held, the busiest holds 4: no eviction
    CHECK(more.closed(1, 10s) == 1);
    CHECK(first.closed(1, 0ms) == 0);
    CHECK(second.closed(1, 0ms) == 0);
    CHECK(host.wait_for_log("holds its share of them"));
    // A client from elsewhere still gets in.
    auto client = host.client();
    CHECK(client->hello().identity == "alice");
}
