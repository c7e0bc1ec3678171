// SPDX-License-Identifier: BSD-3-Clause
// Per-extent digests over the control channel against the real rpmemd: a replica's digests
// equal the initiator's local ones after persists, a change on the target shows in exactly one
// extent, and requests the daemon must refuse (no pool open, in the header, beyond the pool, a
// malformed extent size) get an answer naming the field while the session carries on.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include <catch2/catch.hpp>

#include "client/extent_digest.h"
#include "client/replica.h"
#include "client_settings.h"
#include "raw_tls_client.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;

namespace {

// One part: more than one DigestRequest's worth of 4 KiB extents (8192 of them, 32 MiB).
constexpr std::size_t kPoolBytes = 40 << 20;
constexpr std::size_t kExtent = 64 << 10;

// An initiator's pool with a pmemobj-like header and a replica created for it on `host`.
struct ReplicatedPool {
    explicit ReplicatedPool(TargetHost& host)
        : memory(pool_buffer(kPoolBytes)) {
        host.write_set("digest.set",
                       "PMEMPOOLSET\n40M " + (host.dir() / "digest.0").string() + "\n");
        unsigned lanes = 1;
        PoolAttributes attributes = pmemobj_attributes();
        auto made = client::Replica::create(client_settings(host.credentials().client()),
                                            Target{"", "127.0.0.1", host.port()}, "digest.set",
                                            pool(), lanes, &attributes);
        INFO((made ? std::string() : made.error().message()));
        REQUIRE(made);
        replica = std::move(*made);
    }

    std::span<std::byte> pool() const { return {memory.data(), kPoolBytes}; }

    PageBuffer memory;
    std::unique_ptr<client::Replica> replica;
};

} // namespace

TEST_CASE("a replica's digests equal the initiator's after persists, and a change on the "
          "target shows in its extent alone") {
    TempDir scratch("rpmem-digest-cwd");
    const WorkingDirectory here(scratch.path()); // rpmemd's too
    TargetHost host;
    ReplicatedPool initiator(host);
    client::Replica& replica = *initiator.replica;
    const client::Range data{4096, kPoolBytes - 4096};

    // A pattern at the start and near the end (the second request of 4 KiB extents).
    for (std::size_t start : {data.offset, kPoolBytes - (2 << 20)}) {
        for (std::size_t i = start; i < start + (1 << 20); ++i)
            initiator.memory.data()[i] = static_cast<std::byte>((i * 7 + i / 4096) & 0xff);
        REQUIRE(replica.persist(start, 1 << 20, 0, client::PersistMode::strict));
    }

    auto local = client::local_digests(initiator.pool(), data.offset, data.length, kExtent);
    REQUIRE(local);
    auto remote = replica.digests(data.offset, data.length, kExtent);
    INFO((remote ? std::string() : remote.error().message()));
    REQUIRE(remote);
    CHECK(*remote == *local);
    CHECK(remote->size() == 640); // 40 MiB - 4 KiB in 64 KiB extents: the last one short

    // Extents of 4 KiB: 10239 of them, split into two requests that line up.
    auto small = replica.digests(data.offset, data.length, 4096);
    REQUIRE(small);
    CHECK(small->size() == 10239);
    CHECK(*small == *client::local_digests(initiator.pool(), data.offset, data.length, 4096));

    // Change one byte of the target's part behind the daemon's back (as a lost write would).
    {
        std::fstream part(host.dir() / "digest.0", std::ios::in | std::ios::out | std::ios::binary);
        REQUIRE(part);
        part.seekp(3 * kExtent + 100);
        part.put('!');
    }
    auto after = replica.digests(data.offset, data.length, kExtent);
    REQUIRE(after);
    CHECK(client::differing_ranges(*local, *after, data, kExtent) ==
          std::vector<client::Range>{{4096 + 2 * kExtent, kExtent}});

    // Repair it with a persist of that extent, as rpmemctl verify --repair does.
    REQUIRE(replica.persist(4096 + 2 * kExtent, kExtent, 0, client::PersistMode::strict));
    auto repaired = replica.digests(data.offset, data.length, kExtent);
    REQUIRE(repaired);
    CHECK(*repaired == *local);
    CHECK(replica.close());
}

TEST_CASE("digest requests the daemon refuses name the field, and the session goes on") {
    TempDir scratch("rpmem-digest-cwd");
    const WorkingDirectory here(scratch.path()); // rpmemd's too
    TargetHost host;
    ReplicatedPool initiator(host);
    client::Replica& replica = *initiator.replica;

    auto in_header = replica.digests(0, 8192, 4096);
    REQUIRE_FALSE(in_header);
    CHECK(in_header.error().errno_value() == EINVAL);
    CHECK_THAT(in_header.error().message(),
               Catch::Contains("127.0.0.1") &&
                   Catch::Contains("offset: 0 is inside the pool header (the first 4096 bytes)"));

    auto beyond = replica.digests(kPoolBytes - 4096, 8192, 4096);
    REQUIRE_FALSE(beyond);
    CHECK_THAT(beyond.error().message(),
               Catch::Contains("length: [41938944, +8192) ends beyond the pool of 41943040 bytes"));
    auto past = replica.digests(kPoolBytes, 4096, 4096);
    REQUIRE_FALSE(past);
    CHECK_THAT(past.error().message(),
               Catch::Contains("offset: 41943040 is beyond the pool of 41943040 bytes"));

    // A bad extent size never leaves the client...
    auto odd = replica.digests(4096, 8192, 3000);
    REQUIRE_FALSE(odd);
    CHECK_THAT(odd.error().message(),
               Catch::Contains("extent_size: 3000 is not a power of two from 4096 to 67108864"));
    // ...and still works after the refusals.
    CHECK(replica.digests(4096, 8192, 4096));
    CHECK(replica.close());
}

TEST_CASE("the daemon refuses malformed digest requests and those without a pool") {
    TempDir scratch("rpmem-digest-cwd");
    const WorkingDirectory here(scratch.path()); // rpmemd's too
    TargetHost host;
    auto raw = RawTlsClient::connect(host.port(), host.credentials().client());
    REQUIRE(raw);
    REQUIRE(raw->hello());

    auto answer = [&](const std::vector<std::uint8_t>& frame) {
        REQUIRE(raw->send(frame));
        auto reply = raw->receive(kPatience);
        REQUIRE(reply);
        return reply->message;
    };

    // A well-formed request without an open pool: a DigestReply refusing it.
    auto encoded =
        protocol::encode(protocol::Request(protocol::DigestRequest{4096, 4096, 4096}), 3);
    REQUIRE(encoded);
    auto no_pool = answer(*encoded);
    REQUIRE(std::holds_alternative<protocol::DigestReply>(no_pool));
    CHECK(std::get<protocol::DigestReply>(no_pool).status == protocol::Status::invalid_request);
    CHECK(std::get<protocol::DigestReply>(no_pool).message == "this session has no pool open");

    // A malformed one (extent size 3000): the decoder's error reply names the field, and the
    // connection stays up.
    std::vector<std::uint8_t> bad = *encoded;
    const std::size_t extent_at = protocol::kFrameHeaderSize + 16;
    bad[extent_at] = 0xb8; // 3000 = 0x0bb8
    bad[extent_at + 1] = 0x0b;
    auto refused = answer(bad);
    REQUIRE(std::holds_alternative<protocol::ErrorReply>(refused));
    CHECK(std::get<protocol::ErrorReply>(refused).status == protocol::Status::bad_message);
    CHECK_THAT(std::get<protocol::ErrorReply>(refused).message,
               Catch::Contains("decoding digest: extent_size: 3000 is not a power of two"));

    auto pong = answer(*protocol::encode(protocol::Request(protocol::Ping{}), 4));
    CHECK(std::holds_alternative<protocol::Pong>(pong));
}
