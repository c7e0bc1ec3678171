// SPDX-License-Identifier: BSD-3-Clause
// What clients send cannot shape rpmemd's log or break its replies: a pool set name holding a
// newline and escape codes shows escaped and forges no line; a 4,095-byte name gets its real
// status and a bounded message; a flood of refused connections costs O(1) log lines.
#include <cerrno>
#include <csignal>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "channel/client.h"
#include "protocol/message_limits.h"
#include "source_socket.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using namespace std::chrono_literals;
using protocol::Status;

namespace {

protocol::Reply create(channel::Client& client, const std::string& name) {
    protocol::CreateRequest request;
    request.pool_set = name;
    request.lanes = 1;
    request.attributes = pmemobj_attributes();
    auto reply = client.call(request);
    INFO((reply ? std::string() : reply.error().message()));
    REQUIRE(reply);
    return *reply;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

} // namespace

TEST_CASE("a pool set name with a newline and escape codes cannot forge a log line") {
    TargetHost host;
    auto client = host.client();
    const std::string forged = "FORGED 2026-12-01 12:00:00.000 [1] info: session 9 "
                               "(127.0.0.1:1): identity 'admin' accepted";
    std::string name = "x.set\n" + forged + "\x1b[2K\r";
    auto reply = create(*client, name);
    CHECK(protocol::reply_status(reply) == Status::no_exist);
    // The reply quotes it escaped too.
    CHECK_THAT(std::string(protocol::reply_message(reply)), Catch::Contains("x.set\\nFORGED"));

    REQUIRE(host.wait_for_log("x.set\\nFORGED"));
    std::string log = host.dir().read("rpmemd.log");
    for (const auto& line : lines_of(log)) {
        CAPTURE(line);
        CHECK_FALSE(line.starts_with("FORGED"));
        CHECK(line.find('\x1b') == std::string::npos);
        CHECK(line.find('\r') == std::string::npos);
    }
    CHECK_THAT(log, Catch::Contains("accepted\\x1b[2K\\r'"));
}

TEST_CASE("a 4,095-byte pool set name gets its real status and a bounded message") {
    TargetHost host;
    auto client = host.client();
    SECTION("one long component") {
        std::string name(protocol::kMaxPoolSetNameLength, 'a');
        auto reply = create(*client, name);
        CHECK(protocol::reply_status(reply) == Status::bad_name);
        std::string message = std::string(protocol::reply_message(reply));
        CHECK(message.size() <= protocol::kMaxMessageLength);
        CHECK_THAT(message, Catch::Contains("too long"));
        CHECK_THAT(message, Catch::Contains("(3839 more bytes)"));
    }
    SECTION("many short components") {
        std::string name;
        while (name.size() + 2 <= protocol::kMaxPoolSetNameLength)
            name += "a/";
        name += "a";
        auto reply = create(*client, name);
        CHECK(protocol::reply_status(reply) == Status::no_exist);
        std::string message = std::string(protocol::reply_message(reply));
        CHECK(message.size() <= protocol::kMaxMessageLength);
        CHECK_THAT(message, Catch::Contains("more bytes)"));
    }
    CHECK_FALSE(host.dir().read("rpmemd.log").find("cannot encode") != std::string::npos);
}

TEST_CASE("refused connections cost O(1) log lines") {
    TargetHost host;
    constexpr int kRefused = 100;
    // Not TLS at all: each is refused at its handshake. One at a time, each read to its end,
    // so that every refusal has been counted before the daemon stops.
    for (int i = 0; i < kRefused; ++i) {
        int fd = connect_from("127.0.0.3", host.port());
        REQUIRE(fd >= 0);
        const char garbage[] = "GET / HTTP/1.0\r\n\r\n";
        REQUIRE(::send(fd, garbage, sizeof(garbage) - 1, MSG_NOSIGNAL) > 0);
        CHECK(closed_by_peer(fd, kPatience));
        ::close(fd);
    }
    // Stopping logs the summary of the window still running.
    CHECK(host.daemon().stop(SIGTERM) == 0);
    std::string log = host.dir().read("rpmemd.log");
    int full = 0;
    int summaries = 0;
    long suppressed = 0;
    std::regex summary(R"(refused (\d+) connections in the last \d+ s \((\d+) not logged)");
    for (const auto& line : lines_of(log)) {
        if (line.find("refused connection from 127.0.0.3") != std::string::npos)
            ++full;
        std::smatch match;
        if (std::regex_search(line, match, summary)) {
            ++summaries;
            suppressed += std::stol(match[2]);
        }
    }
    CAPTURE(log.size());
    CHECK(full <= 5);
    CHECK(summaries >= 1);
    CHECK(summaries <= 3);
    CHECK(full + suppressed == kRefused);
}
