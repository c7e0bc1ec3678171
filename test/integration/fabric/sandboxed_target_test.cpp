// SPDX-License-Identifier: BSD-3-Clause
// The worker sandbox against a real data path: a forked child loads the providers (a first
// fi_getinfo, as the worker does before its sandbox), enters the sandbox, and only then opens
// fabric, domain, queues, registrations and the passive endpoint and starts its responder
// thread; this process connects and does RMA writes and reads and message round trips on tcp
// and sockets. Proves that the seccomp allow-list and Landlock leave the data path whole.
#include <cstring>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loopback.h"
#include "rpmemd/worker/sandbox.h"

using namespace rpmem::fabric;
using namespace rpmem::fabric::test;

namespace {

constexpr auto kDeadline = std::chrono::seconds(10);
constexpr std::size_t kLength = 65536;
constexpr std::size_t kRemoteOffset = 4096 + 24;

void write_text(int fd, const std::string& text) {
    (void)!::write(fd, text.data(), text.size());
}

// Until end of line or file.
std::string read_line(int fd) {
    std::string line;
    char c = 0;
    while (::read(fd, &c, 1) == 1 && c != '\n')
        line += c;
    return line;
}

// The child: "port address key length\n" once it serves, then after `stop` closes, its verdict (""
// when the target met no error and its memory holds the bytes written).
[[noreturn]] void serve_sandboxed(const std::string& provider, int up, int stop) {
    std::string verdict;
    try {
        must(select_provider({provider, Role::listener, "127.0.0.1", "0"}));
        rpmem::daemon::SandboxOptions options;
        options.keep_fds = {2, up, stop};
        auto entered = rpmem::daemon::enter_sandbox(options);
        if (!entered)
            throw std::runtime_error(entered.error().message());
        LoopbackTarget target({provider});
        const RemoteRegion region = target.region();
        write_text(up, fmt::format("{} {} {} {}\n", target.service(), region.address, region.key,
                                   region.length));
        char byte = 0;
        (void)!::read(stop, &byte, 1);
        std::byte expected[kLength];
        fill(expected, kLength, 5);
        if (!target.failure().empty())
            verdict = "target: " + target.failure();
        else if (std::memcmp(target.memory() + kRemoteOffset, expected, kLength) != 0)
            verdict = "the target's memory does not hold the bytes written";
    } catch (const std::exception& error) {
        verdict = error.what();
        write_text(up, "\n"); // no port: the parent stops waiting
    }
    write_text(up, verdict.empty() ? "ok" : verdict);
    ::_exit(verdict.empty() ? 0 : 1);
}

} // namespace

TEST_CASE("a sandboxed target serves RMA and messages", "[fabric][sandbox]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    int up[2];
    int stop[2];
    REQUIRE(::pipe2(up, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(stop, O_CLOEXEC) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(up[0]);
        ::close(stop[1]);
        serve_sandboxed(provider, up[1], stop[0]);
    }
    ::close(up[1]);
    ::close(stop[0]);

    std::istringstream served(read_line(up[0]));
    std::string port;
    RemoteRegion region;
    if (served >> port >> region.address >> region.key >> region.length) {
        LoopbackClient client(provider, port);
        OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));

        // RMA write, then read back into another part of the local buffer (the read completes
        // after the write).
        fill(client.buffer(), kLength, 5);
        must(lane.write(client.region(), 0, kLength, region, kRemoteOffset));
        int read_tag = 0;
        must(lane.read(client.region(), 262144, kLength, region, kRemoteOffset, &read_tag));
        must(lane.wait_for(&read_tag, deadline_after(kDeadline)));
        CHECK(std::memcmp(client.buffer() + 262144, client.buffer(), kLength) == 0);

        // Messages: the target's responder thread answers each with its bytes plus one.
        exchange_messages(client, lane, std::size_t{1} << 19);
    }
    ::close(stop[1]);
    std::string verdict;
    char buffer[256];
    ssize_t got = 0;
    while ((got = ::read(up[0], buffer, sizeof buffer)) > 0)
        verdict.append(buffer, static_cast<std::size_t>(got));
    ::close(up[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    INFO("child: " << verdict);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
