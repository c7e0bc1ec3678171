// SPDX-License-Identifier: BSD-3-Clause
// Data operations over 127.0.0.1 on tcp and sockets: RMA write then read back, messages both
// ways, commit-complete writes, unsignalled writes beyond the queue depth, and bad remote
// accesses that must end in an error completion (never a crash of either side).
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "loopback.h"

using namespace rpmem::fabric;
using namespace rpmem::fabric::test;
using rpmem::Result;

namespace {

constexpr auto kDeadline = std::chrono::seconds(10);
// Client buffer layout: RMA data below kMessages, messages above.
constexpr std::size_t kMessages = std::size_t{1} << 19;

} // namespace

TEST_CASE("an RMA write lands at the target and reads back the same", "[fabric][rma]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));

    // Without FI_MR_VIRT_ADDR the target hands out offsets (base 0), with it its address.
    const Capabilities& caps = lane.capabilities();
    CHECK(target.region().address ==
          (caps.mr_virt_addr ? reinterpret_cast<std::uint64_t>(target.memory()) : 0));
    CHECK(lane.max_private_data() >= caps.max_private_data);

    const std::size_t length = GENERATE(std::size_t{8}, std::size_t{4096}, std::size_t{65536});
    const std::size_t remote_offset = 4096 + 24;
    fill(client.buffer(), length, 3);
    must(lane.write(client.region(), 0, length, target.region(), remote_offset));
    // Read into a different part of the local buffer; the read completes after the write.
    int read_tag = 0;
    must(lane.read(client.region(), 262144, length, target.region(), remote_offset, &read_tag));
    const Completion done = must(lane.wait_for(&read_tag, deadline_after(kDeadline)));
    CHECK(done.context == &read_tag);
    CHECK(std::memcmp(client.buffer() + 262144, client.buffer(), length) == 0);
    CHECK(std::memcmp(target.memory() + remote_offset, client.buffer(), length) == 0);
    CHECK(target.failure().empty());
}

TEST_CASE("messages go both ways", "[fabric][msg]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));

    exchange_messages(client, lane, kMessages);
    CHECK(target.failure().empty());
}

TEST_CASE("a commit-complete write is in the target's memory when it completes",
          "[fabric][rma][commit]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));
    REQUIRE(lane.capabilities().commit_complete);
    CHECK(lane.capabilities().rma_pmem == (provider == "tcp"));

    const std::size_t length = 4096;
    fill(client.buffer(), length, 11);
    int tag = 0;
    must(lane.write_commit(client.region(), 0, length, target.region(), 8192, &tag));
    must(lane.wait_for(&tag, deadline_after(kDeadline)));
    CHECK(std::memcmp(target.memory() + 8192, client.buffer(), length) == 0);
}

TEST_CASE("unsignalled writes beyond the transmit depth never overflow the queue",
          "[fabric][rma]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    EndpointOptions options;
    options.tx_depth = 4;
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"), options);
    REQUIRE(lane.tx_depth() == 4);

    // 64 unsignalled writes on a queue of 4: the window forces completions and waits for them.
    for (std::size_t i = 0; i < 64; ++i) {
        client.buffer()[i * 64] = std::byte(i + 1);
        must(lane.write(client.region(), i * 64, 64, target.region(), i * 64));
        REQUIRE(lane.tx_window().in_flight() <= 4);
    }
    int tag = 0;
    must(lane.read(client.region(), 262144, 8, target.region(), 0, &tag));
    must(lane.wait_for(&tag, deadline_after(kDeadline)));
    for (std::size_t i = 0; i < 64; ++i)
        CHECK(target.memory()[i * 64] == std::byte(i + 1));
    // The forced completions were the endpoint's own: nothing else is left for the caller.
    std::array<Completion, 4> left;
    CHECK(must(lane.poll(left)) == 0);
}

TEST_CASE("a wrong remote key gives an error completion, not a crash", "[fabric][rma][error]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));

    RemoteRegion forged = target.region();
    forged.key ^= 0x5a5a5a5a5a5a5a5aULL;
    int tag = 0;
    auto posted = lane.read(client.region(), 0, 64, forged, 0, &tag);
    Result<Completion> done = posted ? lane.wait_for(&tag, deadline_after(kDeadline))
                                     : Result<Completion>(tl::unexpected(posted.error()));
    REQUIRE_FALSE(done);
    INFO(done.error().message());
    CHECK(done.error().errno_value() != ETIMEDOUT);
    CHECK(lane.state().failed());

    // The target is still serving: a new lane works.
    OwnQueueEndpoint fresh = client.connect_lane(bytes_of("token"));
    must(fresh.read(client.region(), 0, 8, target.region(), 0, &tag));
    must(fresh.wait_for(&tag, deadline_after(kDeadline)));
}

TEST_CASE("an out-of-range remote offset gives an error completion, not a crash",
          "[fabric][rma][error]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));

    // The local check refuses what the region does not contain...
    auto refused = lane.write(client.region(), 0, 64, target.region(), target.region().length);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().errno_value() == EINVAL);

    // ...so lie about the length to make the target's provider see the access.
    RemoteRegion stretched = target.region();
    stretched.length *= 4;
    int tag = 0;
    auto posted = lane.read(client.region(), 0, 64, stretched, target.region().length * 2, &tag);
    Result<Completion> done = posted ? lane.wait_for(&tag, deadline_after(kDeadline))
                                     : Result<Completion>(tl::unexpected(posted.error()));
    REQUIRE_FALSE(done);
    INFO(done.error().message());
    CHECK(done.error().errno_value() != ETIMEDOUT);

    OwnQueueEndpoint fresh = client.connect_lane(bytes_of("token"));
    must(fresh.read(client.region(), 0, 8, target.region(), 0, &tag));
    must(fresh.wait_for(&tag, deadline_after(kDeadline)));
}

TEST_CASE("a lane moved onto a connected one replaces it and keeps working", "[fabric][move]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackTarget target({provider});
    LoopbackClient client(provider, target.service());
    OwnQueueEndpoint lane = client.connect_lane(bytes_of("token"));
    OwnQueueEndpoint other = client.connect_lane(bytes_of("token"));
    // The generated move assignment closes the old endpoint, then its queue.
    lane = std::move(other);

    fill(client.buffer(), 4096, 5);
    must(lane.write(client.region(), 0, 4096, target.region(), 8192));
    int read_tag = 0;
    must(lane.read(client.region(), 262144, 4096, target.region(), 8192, &read_tag));
    const Completion done = must(lane.wait_for(&read_tag, deadline_after(kDeadline)));
    CHECK(done.context == &read_tag);
    CHECK(std::memcmp(client.buffer() + 262144, client.buffer(), 4096) == 0);
    // The replaced connection was closed: its target side fails (the target thread looks at
    // its lanes' states after every read of its queue).
    const Deadline deadline = deadline_after(kDeadline);
    while (target.broken() != 1 && Clock::now() < deadline)
        std::this_thread::yield();
    CHECK(target.broken() == 1);
    CHECK(target.failure().empty());
}
