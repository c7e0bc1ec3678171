// SPDX-License-Identifier: BSD-3-Clause
// Connection setup over 127.0.0.1 on tcp and sockets: private data reaches the listener, which
// accepts or rejects by it; a rejection is a clear ECONNREFUSED on the connector's side.
#include <cerrno>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "loopback.h"

using namespace rpmem::fabric;
using namespace rpmem::fabric::test;
using rpmem::Result;

namespace {

std::string text_of(std::span<const std::byte> data) {
    return std::string(reinterpret_cast<const char*>(data.data()), data.size());
}

} // namespace

TEST_CASE("a listener binds port 0 and reports the port it got", "[fabric][connect]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    CHECK(target.service() != "0");
    // A second listener gets a different port.
    LoopbackTarget other({provider});
    CHECK(other.service() != target.service());
}

TEST_CASE("the listener sees the connector's private data and accepts", "[fabric][connect]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    std::mutex mutex;
    std::vector<std::string> seen;
    TargetOptions options{provider};
    options.accept = [&](std::span<const std::byte> data) {
        const std::lock_guard lock(mutex);
        seen.push_back(text_of(data));
        return true;
    };
    LoopbackTarget target(options);
    LoopbackClient client(provider, target.service());

    OwnQueueEndpoint lane = client.connect_lane(bytes_of("session-token-0123456789abcdef"));
    CHECK(lane.state().phase() == ConnectionState::Phase::connected);
    CHECK(lane.peer() == "127.0.0.1:" + target.service());
    {
        const std::lock_guard lock(mutex);
        REQUIRE(seen.size() == 1);
        CHECK(seen[0] == "session-token-0123456789abcdef");
    }
    CHECK(target.accepted() == 1);
    CHECK(target.failure().empty());
}

TEST_CASE("a rejected connection fails with ECONNREFUSED and the listener goes on",
          "[fabric][connect]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    TargetOptions options{provider};
    options.accept = [](std::span<const std::byte> data) { return text_of(data) == "good"; };
    LoopbackTarget target(options);
    LoopbackClient client(provider, target.service());

    OwnQueueEndpoint refused = client.start_lane(bytes_of("forged"));
    auto outcome = refused.wait_connected(deadline_after(std::chrono::seconds(10)));
    REQUIRE_FALSE(outcome);
    CHECK(outcome.error().errno_value() == ECONNREFUSED);
    CHECK_THAT(outcome.error().message(), Catch::Contains("rejected"));
    CHECK_THAT(outcome.error().message(), Catch::Contains("127.0.0.1:" + target.service()));
    CHECK(refused.state().failed());

    // Operations on the refused endpoint fail the same way instead of reaching the provider.
    auto write = refused.write(client.region(), 0, 8, target.region(), 0);
    REQUIRE_FALSE(write);
    CHECK(write.error().errno_value() == ECONNREFUSED);

    OwnQueueEndpoint accepted = client.connect_lane(bytes_of("good"));
    CHECK(accepted.state().phase() == ConnectionState::Phase::connected);
    CHECK(target.rejected() == 1);
    CHECK(target.accepted() == 1);
}

TEST_CASE("connecting to a port nobody listens on fails, not hangs", "[fabric][connect]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    std::string service;
    {
        // A port that was free a moment ago: listen, note it, close the listener.
        LoopbackTarget gone({provider});
        service = gone.service();
    }
    LoopbackClient client(provider, service);
    OwnQueueEndpoint lane = must(OwnQueueEndpoint::create(
        client.side().domain, *client.side().provider.info, *client.side().events));
    auto connected = lane.connect(bytes_of("token"));
    if (connected)
        connected = lane.wait_connected(deadline_after(std::chrono::seconds(10)));
    REQUIRE_FALSE(connected);
    CHECK(connected.error().errno_value() != ETIMEDOUT);
}

TEST_CASE("private data larger than the provider carries is refused before sending",
          "[fabric][connect]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = must(OwnQueueEndpoint::create(
        client.side().domain, *client.side().provider.info, *client.side().events));
    const std::string huge(4096, 'x');
    auto connected = lane.connect(bytes_of(huge));
    REQUIRE_FALSE(connected);
    CHECK(connected.error().errno_value() == EMSGSIZE);
}
