// SPDX-License-Identifier: BSD-3-Clause
// A session's data port admits only that session's lanes (issue 27): raw TCP connections to it,
// with no certificate and no lane binding, cost the identity's worker nothing lasting. Those
// that stay silent are closed within the lane-binding deadline (rpmemd/lane_gate.h) while the
// session goes on; and once the session ends, its listener and everything on it are gone: the
// worker's descriptor count is back where it was before the session (the leak of libfabric
// 1.17's tcp provider, lib/fabric/README.md "Listeners").
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel/client.h"
#include "control_requests.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;

namespace {

// The worker's descriptors, less the ones its lane gate holds for a moment while it sweeps
// (/proc/self/fd and /proc/net/tcp, read every few hundred milliseconds while a port is open):
// counted in a baseline, those would make it one too high at random.
std::size_t descriptors_of(pid_t pid) {
    std::size_t count = 0;
    std::error_code error;
    for (auto it =
             std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error);
         !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
        std::error_code unreadable;
        const std::string target = std::filesystem::read_symlink(it->path(), unreadable).string();
        if (!unreadable && target.rfind("/proc/", 0) == 0)
            continue;
        ++count;
    }
    return count;
}

// Waits (a bounded poll of /proc, the condition has no event to wait on) until the worker's
// descriptor count is `wanted`; returns the last count seen.
std::size_t wait_for_descriptors(pid_t pid, std::size_t wanted) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    std::size_t now = descriptors_of(pid);
    while (now != wanted && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        now = descriptors_of(pid);
    }
    return now;
}

// A TCP connection to 127.0.0.1:`port`; the caller closes it.
int raw_connect(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    return fd;
}

} // namespace

TEST_CASE("raw connections to a data port leave the worker's descriptors at their baseline") {
    TargetHost host;
    host.write_set("keep.set", "keep", 1);
    host.write_set("flooded.set", "flooded", 1);
    // The first session keeps the identity's worker alive throughout.
    auto keeper = host.client();
    call_ok<protocol::CreateReply>(*keeper, create_request("keep.set", 2));
    const pid_t worker = host.last_worker_pid();
    REQUIRE(worker > 0);
    const std::size_t baseline = descriptors_of(worker);

    auto client = host.client();
    auto created = call_ok<protocol::CreateReply>(*client, create_request("flooded.set", 2));
    const std::uint16_t port = created.data_path.port;
    REQUIRE(port != 0);
    const std::size_t with_session = descriptors_of(worker);
    CHECK(with_session > baseline);

    SECTION("silent connections are closed within the deadline while the session goes on") {
        std::vector<int> silent;
        for (int i = 0; i < 50; ++i)
            silent.push_back(raw_connect(port));
        // One that starts a connection request and never finishes it.
        int partial = raw_connect(port);
        REQUIRE(::write(partial, "\x03", 1) == 1);
        silent.push_back(partial);
        CHECK(wait_for_descriptors(worker, with_session) == with_session);
        // The worker closed them: each peer sees the end of its stream.
        for (int fd : silent) {
            char byte = 0;
            CHECK(::read(fd, &byte, 1) <= 0);
            ::close(fd);
        }
        // Logged after the sweep shut them down, and relayed by the supervisor: waited for.
        CHECK(host.wait_for_log("presented no lane binding within"));
        // The session is unharmed.
        call_ok<protocol::StatusReply>(*client, protocol::StatusRequest{});
        call_ok<protocol::CloseReply>(*client, protocol::CloseRequest{});
        CHECK(wait_for_descriptors(worker, baseline) == baseline);
    }
    SECTION("connect and close floods, and connections still open when the session ends") {
        for (int round = 0; round < 3; ++round)
            for (int i = 0; i < 100; ++i)
                ::close(raw_connect(port));
        std::vector<int> held;
        for (int i = 0; i < 20; ++i)
            held.push_back(raw_connect(port));
        call_ok<protocol::CloseReply>(*client, protocol::CloseRequest{});
        CHECK(wait_for_descriptors(worker, baseline) == baseline);
        // Peers that speak only after the listener went: nothing of it is left to reach.
        for (int fd : held) {
            (void)::write(fd, "xxxxxxxxxxxxxxxxxxxxxxxx", 24);
            ::close(fd);
        }
        // The port is closed.
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0);
        ::close(fd);
        CHECK(descriptors_of(worker) == baseline);
    }
    // The worker served on: a new session on the flooded set works.
    call_ok<protocol::CloseReply>(*keeper, protocol::CloseRequest{});
    auto again = host.client();
    protocol::OpenRequest open;
    open.pool_set = "flooded.set";
    open.pool_size = 2u << 20;
    open.lanes = 1;
    call_ok<protocol::OpenReply>(*again, open);
    CHECK(::kill(worker, 0) == 0);
}
