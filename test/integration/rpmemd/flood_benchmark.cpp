// SPDX-License-Identifier: BSD-3-Clause
// The acceptance figure of rpmemd's admission limits: rpmemd under a 1024-descriptor limit
// (prlimit), 1,100 idle TCP connections kept open against it (each one the server closes is
// reopened at once, the attack's own behaviour), and a legitimate client from 127.0.0.1 doing
// connect + Hello + create + close round trips. Its loaded rate must be at least half its
// unloaded rate, measured in the same run. Prints both rates, the ratio and rpmemd's RSS
// before, during and after the flood.
//
// RPMEM_FLOOD_CONNECTIONS (default 1100) and RPMEM_FLOOD_SOURCES (default 1: all from
// 127.0.0.2; N spreads them over 127.0.0.2 .. 127.0.0.N+1) change the attack;
// RPMEM_FLOOD_SECONDS (default 3) each measuring period. In the benchmark-smoke suite (CI, a
// loaded sanitizer build) it only requires that the client is served under the flood at all;
// RPMEM_FLOOD_MIN_RATIO=0.5 makes it hold the acceptance figure (a benchmark run).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel/client.h"
#include "source_socket.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

int env_int(const char* name, int fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

long rss_kib(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            return std::atol(line.c_str() + 6);
    return -1;
}

// Keeps `count` idle connections open until stopped, reopening each one the server closes.
class Flooder {
public:
    Flooder(std::uint16_t port, int count, int sources)
        : thread_([this, port, count, sources] { run(port, count, sources); }) {}
    ~Flooder() {
        stop_ = true;
        thread_.join();
    }
    long reopened() const { return reopened_.load(); }

private:
    void run(std::uint16_t port, int count, int sources) {
        std::vector<pollfd> fds;
        std::vector<std::string> from;
        for (int i = 0; i < count; ++i) {
            from.push_back("127.0.0." + std::to_string(2 + i % sources));
            fds.push_back({connect_from(from.back(), port, false), POLLIN, 0});
        }
        while (!stop_) {
            if (::poll(fds.data(), fds.size(), 100) <= 0)
                continue;
            for (std::size_t i = 0; i < fds.size(); ++i) {
                if (fds[i].fd >= 0 && fds[i].revents == 0)
                    continue;
                char byte = 0;
                if (fds[i].fd >= 0 && ::recv(fds[i].fd, &byte, 1, MSG_DONTWAIT) > 0)
                    continue;
                if (fds[i].fd >= 0)
                    ::close(fds[i].fd);
                fds[i].fd = connect_from(from[i], port, false);
                fds[i].revents = 0;
                ++reopened_;
            }
        }
        for (auto& p : fds)
            if (p.fd >= 0)
                ::close(p.fd);
    }

    std::atomic<bool> stop_{false};
    std::atomic<long> reopened_{0};
    std::thread thread_;
};

// connect + Hello + create + close round trips completed within `period`.
int round_trips(TargetHost& host, std::chrono::seconds period) {
    int done = 0;
    auto end = Clock::now() + period;
    while (Clock::now() < end) {
        auto client = host.connect();
        INFO((client ? std::string() : client.error().message()));
        REQUIRE(client);
        protocol::CreateRequest create;
        create.pool_set = "pool.set";
        create.lanes = 1;
        create.attributes = pmemobj_attributes();
        REQUIRE(channel::expect<protocol::CreateReply>((*client)->call(create), "create"));
        REQUIRE(channel::expect<protocol::CloseReply>((*client)->call(protocol::CloseRequest{true}),
                                                      "close"));
        ++done;
    }
    return done;
}

} // namespace

TEST_CASE("a legitimate client keeps half its rate under a flood of idle connections") {
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
    limit.rlim_cur = limit.rlim_max; // the flooder holds more than 1024 descriptors
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &limit) == 0);

    const int connections = env_int("RPMEM_FLOOD_CONNECTIONS", 1100);
    const int sources = std::max(1, env_int("RPMEM_FLOOD_SOURCES", 1));
    const auto period = std::chrono::seconds(env_int("RPMEM_FLOOD_SECONDS", 3));
    TargetHost host({.config_lines = {"log-level = notice"},
                     .launcher = {"/usr/bin/prlimit", "--nofile=1024:1024"}});
    host.write_set("pool.set", "pool", 1);
    pid_t pid = host.daemon().pid();

    (void)round_trips(host, 1s); // warm up
    long rss_before = rss_kib(pid);
    int unloaded = round_trips(host, period);
    long rss_during = 0;
    int loaded = 0;
    long reopened = 0;
    {
        Flooder flood(host.port(), connections, sources);
        std::this_thread::sleep_for(1s); // let the flood build up (a benchmark, not a test)
        loaded = round_trips(host, period);
        rss_during = rss_kib(pid);
        reopened = flood.reopened();
    }
    std::this_thread::sleep_for(2s); // the pending connections end with the flood
    long rss_after = rss_kib(pid);
    double ratio = unloaded > 0 ? static_cast<double>(loaded) / unloaded : 0.0;
    std::printf("flood: %d connections from %d source(s), %ld reopened; round trips in %lld s: "
                "unloaded %d, loaded %d, ratio %.2f; rpmemd RSS before %ld KiB, during %ld "
                "KiB, after %ld KiB\n",
                connections, sources, reopened, static_cast<long long>(period.count()), unloaded,
                loaded, ratio, rss_before, rss_during, rss_after);
    CHECK(loaded > 0);
    const char* min_ratio = std::getenv("RPMEM_FLOOD_MIN_RATIO");
    if (min_ratio != nullptr && *min_ratio != '\0')
        CHECK(ratio >= std::atof(min_ratio));
}
