// SPDX-License-Identifier: BSD-3-Clause
// Name resolution is bounded by the connect timeout. A child process gets its own mount
// namespace whose /etc/resolv.conf names a loopback name server that never answers (a UDP
// socket nobody reads, with the resolver told to wait 30 s); connecting to a name must give
// up after the 1 s connect timeout with ETIMEDOUT naming the host, not after the resolver's
// 30 s. Needs root (namespaces, port 53); elsewhere the test reports itself skipped (77).
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel_test_support.h"

using namespace channel_test;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSilentServer = "127.83.0.1"; // any 127/8 address is loopback
constexpr const char* kStalledName = "stalled.rpmem.test";

// Runs in the child; returns its exit status (0: resolution gave up in time).
int connect_through_stalled_resolver(const std::filesystem::path& resolv_conf,
                                     const rpmem::channel::ClientConfig& base) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(resolv_conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0) {
        std::perror("setting up the mount namespace");
        return 3;
    }
    auto config = base;
    config.host = kStalledName;
    config.connect_timeout = 1s;
    const auto start = std::chrono::steady_clock::now();
    auto client = rpmem::channel::Client::connect(config);
    const auto took = std::chrono::steady_clock::now() - start;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
    if (client) {
        std::fprintf(stderr, "connected to %s, which cannot resolve\n", kStalledName);
        return 1;
    }
    std::fprintf(stderr, "after %lld ms: %s\n", static_cast<long long>(ms),
                 client.error().message().c_str());
    const bool named = client.error().message().find(kStalledName) != std::string::npos;
    return client.error().errno_value() == ETIMEDOUT && named && took < 5s ? 0 : 1;
}

} // namespace

TEST_CASE("a name server that never answers costs the connect timeout, not the resolver's") {
    if (::geteuid() != 0) {
        WARN("needs root for a mount namespace and port 53; skipped");
        std::exit(77); // meson counts 77 as skipped
    }
    TempDir dir;
    auto files = make_credentials(dir);

    int silent = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(silent >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(53);
    REQUIRE(::inet_pton(AF_INET, kSilentServer, &address.sin_addr) == 1);
    REQUIRE(::bind(silent, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);

    const auto resolv_conf = dir.path() / "resolv.conf";
    std::ofstream(resolv_conf) << "nameserver " << kSilentServer
                               << "\noptions timeout:30 attempts:1\n";

    const auto config = client_config(files, 7636);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0)
        ::_exit(connect_through_stalled_resolver(resolv_conf, config));

    int status = 0;
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    pid_t reaped = 0;
    while ((reaped = ::waitpid(child, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(20ms);
    if (reaped == 0) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        FAIL("the connect did not return within 60 s");
    }
    ::close(silent);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
