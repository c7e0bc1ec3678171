// SPDX-License-Identifier: BSD-3-Clause
// The supervisor <-> worker messages: every kind round-trips; the decoder refuses truncated,
// oversized and inconsistent packets (a worker may be compromised by its client, so the
// supervisor reads its answers with the same care as any wire input).
#include <cerrno>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/worker_message.h"

namespace protocol = rpmem::protocol;
using Bytes = std::vector<std::uint8_t>;

namespace {

protocol::WorkerStart sample_start() {
    protocol::WorkerStart start;
    start.session_id = 7;
    start.session_name = "session 7";
    start.token.fill(0xa5);
    start.provider = protocol::ProviderPreference::tcp;
    start.allowed_providers = {"tcp", "sockets"};
    start.bind_host = "127.0.0.1";
    start.lanes = 4;
    start.pool_size = 8 << 20;
    start.data_offset = 4096;
    start.is_pmem = true;
    start.segments = {{0, 0, 4 << 20, 0}, {1, 4096, 4 << 20, 4 << 20}};
    start.responder_spin_ns = 200'000;
    start.responder_cpu = -1;
    start.reply_delay_ns = 500'000;
    start.counters_page = true;
    return start;
}

Bytes encoded(const protocol::WorkerMessage& message) {
    auto bytes = protocol::encode_worker_message(message);
    REQUIRE(bytes);
    return *bytes;
}

} // namespace

TEST_CASE("every worker message round-trips", "[protocol][worker]") {
    protocol::WorkerStarted started;
    started.session_id = 7;
    started.data_path.provider = "tcp";
    started.data_path.host = "127.0.0.1";
    started.data_path.port = 40000;
    started.data_path.remote_base = ~0ULL - 4095; // offset addressing minus the header: wraps
    started.data_path.remote_key = 0x1234;
    started.data_path.lanes = 4;
    started.data_path.inline_buffer_size = 4096;
    started.software_provider = true;
    started.offers_rma_pmem = true;
    protocol::WorkerStarted refused;
    refused.session_id = 8;
    refused.errno_value = EMEDIUMTYPE;
    refused.message = "no usable fabric provider";

    for (const protocol::WorkerMessage& message :
         {protocol::WorkerMessage{sample_start()}, protocol::WorkerMessage{started},
          protocol::WorkerMessage{refused}, protocol::WorkerMessage{protocol::WorkerStop{9}},
          protocol::WorkerMessage{protocol::WorkerStopped{9}},
          protocol::WorkerMessage{protocol::WorkerHello{"0.1.0"}}}) {
        auto decoded = protocol::decode_worker_message(encoded(message));
        REQUIRE(decoded);
        CHECK(*decoded == message);
    }
}

TEST_CASE("the worker decoder refuses malformed packets", "[protocol][worker]") {
    const Bytes good = encoded(sample_start());

    SECTION("every truncation") {
        for (std::size_t length = 0; length < good.size(); ++length) {
            auto decoded = protocol::decode_worker_message({good.data(), length});
            REQUIRE_FALSE(decoded);
            CHECK(decoded.error().errno_value() == EPROTO);
        }
    }
    SECTION("trailing bytes") {
        Bytes longer = good;
        longer.push_back(0);
        CHECK_FALSE(protocol::decode_worker_message(longer));
    }
    SECTION("an unknown kind") {
        Bytes unknown = good;
        unknown[0] = 0x7f;
        CHECK_FALSE(protocol::decode_worker_message(unknown));
    }
    SECTION("a version longer than any rpmemd's") {
        protocol::WorkerHello hello{std::string(protocol::kMaxWorkerVersionLength + 1, '9')};
        CHECK_FALSE(protocol::encode_worker_message(hello));
    }
    SECTION("a packet over the limit") {
        Bytes huge(protocol::kMaxWorkerMessage + 1, 0);
        CHECK_FALSE(protocol::decode_worker_message(huge));
    }
    SECTION("a segment outside the pool") {
        protocol::WorkerStart start = sample_start();
        start.segments[1].pool_offset = start.pool_size;
        auto decoded = protocol::decode_worker_message(encoded(start));
        REQUIRE_FALSE(decoded);
        CHECK_THAT(decoded.error().message(), Catch::Contains("outside the pool"));
    }
    SECTION("a segment whose offset plus length wraps") {
        protocol::WorkerStart start = sample_start();
        start.segments[1].pool_offset = 4096;
        start.segments[1].length = ~0ULL - 100;
        CHECK_FALSE(protocol::decode_worker_message(encoded(start)));
    }
    SECTION("a segment naming a descriptor that is not there") {
        protocol::WorkerStart start = sample_start();
        start.segments[1].fd_index = 5;
        CHECK_FALSE(protocol::decode_worker_message(encoded(start)));
    }
    SECTION("a header larger than the pool") {
        protocol::WorkerStart start = sample_start();
        start.data_offset = start.pool_size + 1;
        CHECK_FALSE(protocol::decode_worker_message(encoded(start)));
    }
    SECTION("a reply delay beyond 1 s") {
        Bytes delayed = good;
        // reply_delay_ns is the u64 before the last byte (counters_page).
        const std::size_t at = delayed.size() - 1 - 8;
        for (std::size_t i = 0; i < 8; ++i)
            delayed[at + i] = 0xff;
        auto decoded = protocol::decode_worker_message(delayed);
        REQUIRE_FALSE(decoded);
        CHECK_THAT(decoded.error().message(), Catch::Contains("reply_delay_ns"));
    }
    SECTION("an errno out of range in an answer") {
        protocol::WorkerStarted started;
        started.errno_value = 1u << 20;
        CHECK_FALSE(protocol::decode_worker_message(encoded(started)));
    }
}

TEST_CASE("the worker encoder refuses what the decoder would", "[protocol][worker]") {
    protocol::WorkerStart start = sample_start();
    start.segments.assign(protocol::kMaxWorkerSegments + 1, {0, 0, 4096, 0});
    CHECK_FALSE(protocol::encode_worker_message(start));
    start = sample_start();
    start.allowed_providers.assign(protocol::kMaxWorkerProviders + 1, "tcp");
    CHECK_FALSE(protocol::encode_worker_message(start));
    start = sample_start();
    start.reply_delay_ns = protocol::kMaxWorkerReplyDelayNs + 1;
    CHECK_FALSE(protocol::encode_worker_message(start));
}
