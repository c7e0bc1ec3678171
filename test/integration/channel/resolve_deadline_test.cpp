// SPDX-License-Identifier: BSD-3-Clause
// Name resolution is bounded by the connect timeout. A child process gets its own mount
// namespace whose /etc/resolv.conf names a loopback name server that never answers (a UDP
// socket nobody reads, with the resolver told to wait 30 s); connecting to a name must give
// up after the 1 s connect timeout with ETIMEDOUT naming the host, not after the resolver's
// 30 s. Needs root (a mount namespace, port 53); elsewhere meson reports the test skipped. The
// test process itself keeps its namespace and /etc/resolv.conf.
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel_test_support.h"
#include "precondition.h"
#include "process.h"

using namespace channel_test;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSilentServer = "127.83.0.1"; // any 127/8 address is loopback
constexpr const char* kStalledName = "stalled.rpmem.test";

// Runs in the child (its own mount namespace with `resolv_conf` bound over /etc/resolv.conf);
// returns "" when resolution gave up in time, else what happened.
std::string connect_through_stalled_resolver(const std::filesystem::path& resolv_conf,
                                             const rpmem::channel::ClientConfig& base) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(resolv_conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0)
        return std::string("setting up the mount namespace: ") + std::strerror(errno);
    auto config = base;
    config.host = kStalledName;
    config.connect_timeout = 1s;
    const auto start = std::chrono::steady_clock::now();
    auto client = rpmem::channel::Client::connect(config);
    const auto took = std::chrono::steady_clock::now() - start;
    if (client)
        return std::string("connected to ") + kStalledName + ", which cannot resolve";
    const std::string outcome =
        "after " +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) +
        " ms: " + client.error().message();
    const bool named = client.error().message().find(kStalledName) != std::string::npos;
    return client.error().errno_value() == ETIMEDOUT && named && took < 5s ? "" : outcome;
}

} // namespace

std::optional<std::string> rpmem::test::missing_precondition() {
    if (auto missing = rpmem::test::missing_root())
        return missing; // port 53
    return rpmem::test::missing_mount_namespace();
}

TEST_CASE("a name server that never answers costs the connect timeout, not the resolver's") {
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
    const rpmem::test::ChildOutcome outcome = rpmem::test::run_in_child(
        [&](int) { return connect_through_stalled_resolver(resolv_conf, config); }, 60s);
    ::close(silent);
    INFO(outcome.message);
    CHECK(outcome.status == 0);
}
