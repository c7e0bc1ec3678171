// SPDX-License-Identifier: BSD-3-Clause
// A peer that dies (SIGKILL) or shuts down wakes the other side's waiters with ECONNRESET
// before their deadline, on tcp and sockets, in both directions: a client lane whose target
// died, and a target endpoint whose client died. The peer is a forked child, started before
// this process opens any fabric object.
#include <array>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loopback.h"

using namespace rpmem::fabric;
using namespace rpmem::fabric::test;
using rpmem::Result;

namespace {

constexpr auto kDeadline = std::chrono::seconds(10);

// A forked child, killed and reaped on destruction; talks to the parent over two pipes.
class Child {
public:
    template <typename Body>
    explicit Child(Body body) {
        int down[2];
        int up[2];
        REQUIRE(pipe(down) == 0);
        REQUIRE(pipe(up) == 0);
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            close(down[1]);
            close(up[0]);
            int status = 1;
            try {
                body(down[0], up[1]);
                status = 0;
            } catch (...) {
            }
            _exit(status); // never return into the test runner
        }
        close(down[0]);
        close(up[1]);
        to_child_ = down[1];
        from_child_ = up[0];
    }
    ~Child() {
        kill();
        close(to_child_);
        close(from_child_);
    }

    void kill() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    void send_line(const std::string& line) const { write_line(to_child_, line); }
    std::string receive_line() const { return read_line(from_child_); }

    static void write_line(int fd, const std::string& line) {
        const std::string text = line + "\n";
        if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
            throw std::runtime_error("pipe write failed");
    }
    // Blocks until a line or end of file (the other side died: empty string).
    static std::string read_line(int fd) {
        std::string line;
        char c;
        while (::read(fd, &c, 1) == 1 && c != '\n')
            line += c;
        return line;
    }

private:
    pid_t pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
};

// Child body: a target that serves until killed; tells the parent where and what to reach.
void serve_as_target(const std::string& provider, int, int up) {
    LoopbackTarget target({provider});
    const RemoteRegion region = target.region();
    Child::write_line(up, target.service() + " " + std::to_string(region.address) + " " +
                              std::to_string(region.key) + " " + std::to_string(region.length));
    pause();
}

// Child body: a client that connects one lane and stays until killed.
void connect_as_client(const std::string& provider, int down, int up) {
    const std::string service = Child::read_line(down);
    LoopbackClient client(provider, service);
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));
    Child::write_line(up, "connected");
    pause();
}

// A target serving in a child (serve_as_target) until killed, and where the parent reaches it.
struct TargetInChild {
    explicit TargetInChild(const std::string& provider)
        : child([&provider](int down, int up) { serve_as_target(provider, down, up); }) {
        std::istringstream where(child.receive_line());
        where >> service >> region.address >> region.key >> region.length;
        REQUIRE(region.length > 0);
    }

    Child child;
    std::string service;
    RemoteRegion region;
};

// A client lane connected to a TargetInChild; members in that order, so the lane closes before
// the child is killed.
struct LaneToChildTarget {
    explicit LaneToChildTarget(const std::string& provider)
        : target(provider)
        , client(provider, target.service)
        , lane(client.connect_lane(bytes_of("token"))) {}

    TargetInChild target;
    LoopbackClient client;
    OwnQueueEndpoint lane;
};

// A write and an 8-byte read, waited for: one APM-style round trip.
Result<Completion> round_trip(LoopbackClient& client, OwnQueueEndpoint& lane,
                              const RemoteRegion& region, int& tag) {
    if (auto written = lane.write(client.region(), 0, 64, region, 0); !written)
        return tl::unexpected(written.error());
    if (auto read = lane.read(client.region(), 4096, 8, region, 0, &tag); !read)
        return tl::unexpected(read.error());
    return lane.wait_for(&tag, deadline_after(kDeadline));
}

} // namespace

TEST_CASE("a client lane sees its target's death as ECONNRESET before the deadline",
          "[fabric][failure]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LaneToChildTarget connected(provider);
    auto& [target, client, lane] = connected;
    int tag = 0;
    must(round_trip(client, lane, target.region, tag));

    target.child.kill();
    const Deadline start = Clock::now();
    // The first operation may still be accepted by the provider; within a few the death shows.
    Result<Completion> outcome = round_trip(client, lane, target.region, tag);
    for (int attempt = 0; outcome && attempt < 100; ++attempt)
        outcome = round_trip(client, lane, target.region, tag);
    REQUIRE_FALSE(outcome);
    INFO(outcome.error().message());
    CHECK(outcome.error().errno_value() == ECONNRESET);
    CHECK(Clock::now() - start < kDeadline);
    CHECK(lane.state().failed());
}

TEST_CASE("a waiting client lane is woken with ECONNRESET when its target dies",
          "[fabric][failure]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LaneToChildTarget connected(provider);
    auto& [target, client, lane] = connected;
    // A receive that the target never answers: the lane waits for it when the target dies.
    int tag = 0;
    must(lane.post_receive(client.region(), 8192, kMessageSize, &tag));
    target.child.kill();
    std::array<Completion, 4> out;
    const Deadline start = Clock::now();
    auto woken = lane.wait(out, deadline_after(kDeadline));
    REQUIRE_FALSE(woken);
    INFO(woken.error().message());
    CHECK(woken.error().errno_value() == ECONNRESET);
    CHECK(Clock::now() - start < kDeadline);
}

TEST_CASE("a target endpoint sees its client's death as ECONNRESET before the deadline",
          "[fabric][failure]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    Child child([&](int down, int up) { connect_as_client(provider, down, up); });

    Side side = Side::open(ProviderRequest{provider, Role::listener, "127.0.0.1", "0"});
    PassiveEndpoint listener =
        must(PassiveEndpoint::listen(side.fabric, *side.provider.info, *side.events));
    child.send_line(std::to_string(listener.port()));
    ConnectionRequest request = must(listener.wait_request(deadline_after(kDeadline)));
    AlignedBuffer buffer(4096);
    MemoryRegion region = must(MemoryRegion::register_memory(
        side.domain, buffer.data(), buffer.size(), access::kReceiveTarget));
    OwnQueueEndpoint endpoint =
        must(OwnQueueEndpoint::create(side.domain, *request.info, *side.events));
    int tag = 0;
    must(endpoint.post_receive(region, 0, kMessageSize, &tag));
    must(endpoint.accept());
    must(endpoint.wait_connected(deadline_after(kDeadline)));
    REQUIRE(child.receive_line() == "connected");

    child.kill();
    std::array<Completion, 4> out;
    const Deadline start = Clock::now();
    auto woken = endpoint.wait(out, deadline_after(kDeadline));
    REQUIRE_FALSE(woken);
    INFO(woken.error().message());
    CHECK(woken.error().errno_value() == ECONNRESET);
    CHECK(Clock::now() - start < kDeadline);
}

TEST_CASE("a peer's orderly shutdown wakes the waiter with ECONNRESET", "[fabric][failure]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));
    OwnQueueEndpoint other = client.connect_lane(bytes_of("token"));

    // Closing one lane must not disturb the other.
    must(lane.shutdown());
    CHECK(lane.state().failed());
    int tag = 0;
    must(other.read(client.region(), 0, 8, target.region(), 0, &tag));
    must(other.wait_for(&tag, deadline_after(kDeadline)));

    auto after = lane.read(client.region(), 0, 8, target.region(), 0, &tag);
    REQUIRE_FALSE(after);
    CHECK(after.error().errno_value() == ECONNRESET);
}
