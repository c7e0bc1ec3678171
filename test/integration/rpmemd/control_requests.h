// SPDX-License-Identifier: BSD-3-Clause
// Control-channel requests as the rpmemd integration tests send them, for a set of one 2 MiB
// part (TargetHost::write_set(name, prefix, 1)): create with libpmemobj's attributes, open;
// and a call that must succeed.
#pragma once

#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "channel/client.h"
#include "pool_fixtures.h"
#include "protocol/reply.h"
#include "protocol/request.h"

namespace rpmem::test {

inline protocol::CreateRequest create_request(std::string name, std::uint32_t lanes = 1) {
    protocol::CreateRequest r;
    r.pool_set = std::move(name);
    r.pool_size = 2u << 20;
    r.lanes = lanes;
    r.attributes = pmemobj_attributes();
    return r;
}

inline protocol::OpenRequest open_request(std::string name, std::uint32_t lanes = 1) {
    protocol::OpenRequest r;
    r.pool_set = std::move(name);
    r.pool_size = 2u << 20;
    r.lanes = lanes;
    return r;
}

// The reply of type ReplyType to `request`; fails the test with the error otherwise.
template <typename ReplyType>
ReplyType call_ok(channel::Client& client, const protocol::Request& request) {
    auto reply = channel::expect<ReplyType>(client.call(request), "request");
    INFO((reply ? std::string() : reply.error().message()));
    REQUIRE(reply);
    return *reply;
}

} // namespace rpmem::test
