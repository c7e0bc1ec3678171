// SPDX-License-Identifier: BSD-3-Clause
// Many clients at once, and one client shared by many threads: every reply answers its own
// request.
#include <atomic>
#include <thread>

#include "channel_test_support.h"

using namespace channel_test;

namespace {

constexpr int kClients = 16;
constexpr int kCallsPerClient = 40;

std::string marker(int client, int call) {
    return "client-" + std::to_string(client) + "/call-" + std::to_string(call) + ".set";
}

} // namespace

TEST_CASE("many concurrent clients each get their own replies") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));

    std::atomic<int> wrong{0};
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
        threads.emplace_back([&, c] {
            auto client = rpmem::channel::Client::connect(client_config(files, server->port()));
            if (!client) {
                ++failed;
                return;
            }
            for (int i = 0; i < kCallsPerClient; ++i) {
                auto reply = (*client)->call(protocol::RemoveRequest{marker(c, i), false, false});
                if (!reply)
                    ++failed;
                else if (std::get<protocol::RemoveReply>(*reply).message != marker(c, i))
                    ++wrong;
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    CHECK(failed == 0);
    CHECK(wrong == 0);
    REQUIRE(log->wait([](auto& l) { return l.closed.size() == kClients; }));
    CHECK(log->opened.size() == kClients);
    CHECK(log->requests.size() == kClients * kCallsPerClient);
    CHECK(server->session_count() == 0);
}

TEST_CASE("one client is safe to call from several threads") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    auto server = start_server(server_config(files), recording_factory(log));
    ClientConfig config = client_config(files, server->port());
    config.heartbeat_interval = 5ms; // pings interleave with the calls all the time
    auto client = connect_client(config);

    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kCallsPerClient; ++i) {
                auto reply = client->call(protocol::RemoveRequest{marker(t, i), false, false});
                if (!reply || std::get<protocol::RemoveReply>(*reply).message != marker(t, i))
                    ++wrong;
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    CHECK(wrong == 0);
    CHECK_FALSE(client->failure());
}

TEST_CASE("the session limit refuses one session too many with EBUSY") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    ServerConfig config = server_config(files);
    config.max_sessions = 2;
    auto server = start_server(config, recording_factory(log));
    auto first = connect_client(client_config(files, server->port()));
    auto second = connect_client(client_config(files, server->port()));

    auto third = rpmem::channel::Client::connect(client_config(files, server->port()));
    REQUIRE_FALSE(third);
    CHECK(third.error().errno_value() == EBUSY);
    CHECK_THAT(third.error().message(), Catch::Contains("limit of 2 sessions"));

    // A closed session frees its place.
    first.reset();
    REQUIRE(log->wait([](auto& l) { return l.closed.size() == 1; }));
    auto fourth = rpmem::channel::Client::connect(client_config(files, server->port()));
    CHECK(fourth);
}
