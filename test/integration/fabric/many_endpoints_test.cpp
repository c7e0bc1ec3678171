// SPDX-License-Identifier: BSD-3-Clause
// Many lanes at once: 64 endpoints on tcp, as many as the domain allows on sockets (it reports
// about 16), connected in parallel and all served by one target thread on one shared CQ.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "loopback.h"

using namespace rpmem::fabric;
using namespace rpmem::fabric::test;
using rpmem::Result;

TEST_CASE("many endpoints connect in parallel and all move data", "[fabric][lanes]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    LoopbackClient probe(provider, "1");
    const Capabilities& caps = probe.capabilities();
    // Every client lane has a CQ of its own, so the CQ count bounds the lanes too.
    const std::size_t lanes = std::min<std::size_t>({64, caps.max_endpoints, caps.max_cqs});
    INFO(caps.describe());
    if (provider == "tcp")
        REQUIRE(lanes == 64);
    else
        REQUIRE(lanes >= 8);

    TargetOptions options{provider};
    options.max_connections = lanes;
    LoopbackTarget target(options);
    LoopbackClient client(provider, target.service());

    EndpointOptions small;
    small.tx_depth = 8;
    small.rx_depth = 8;
    std::vector<OwnQueueEndpoint> endpoints;
    for (std::size_t i = 0; i < lanes; ++i)
        endpoints.push_back(client.start_lane(bytes_of("lane"), small));
    for (OwnQueueEndpoint& endpoint : endpoints)
        must(endpoint.wait_connected(deadline_after(std::chrono::seconds(20))));
    CHECK(target.accepted() == lanes);

    // Each lane writes its own 64 bytes, then all read back.
    std::vector<int> tags(lanes);
    for (std::size_t i = 0; i < lanes; ++i) {
        std::memset(client.buffer() + i * 64, static_cast<int>(i + 1), 64);
        must(endpoints[i].write(client.region(), i * 64, 64, target.region(), i * 64));
        must(endpoints[i].read(client.region(), 262144 + i * 64, 64, target.region(), i * 64,
                               &tags[i]));
    }
    for (std::size_t i = 0; i < lanes; ++i) {
        must(endpoints[i].wait_for(&tags[i], deadline_after(std::chrono::seconds(20))));
        CHECK(std::memcmp(client.buffer() + 262144 + i * 64, client.buffer() + i * 64, 64) == 0);
    }
    CHECK(target.failure().empty());
}
