// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "base/target.h"
#include "client/settings.h"
#include "protocol/replica_state.h"

namespace rpmem::channel {
class Client;
}

namespace rpmem::client {

class LaneSet;

// One session of a replica with rpmemd: the TLS control channel, the pool it created or opened
// there, and the lanes (fabric endpoints) its persists travel on. A Replica has one at a time
// and replaces it whole when it reconnects. The lanes are declared after the channel, so they
// close first.
struct ReplicaSession {
    std::atomic<bool> channel_failed{false}; // set by the channel, read by the lanes
    std::unique_ptr<channel::Client> control;
    std::unique_ptr<LaneSet> lanes; // after control: closes first
    std::uint64_t generation = 0;   // the target's, from the create or open reply
    // Open: the state rpmemd had recorded and the attributes its headers hold.
    protocol::ReplicaState found_state = protocol::ReplicaState::consistent;
    PoolAttributes attributes;
    bool has_headers = false; // offsets below 4096 are the target's header

    ~ReplicaSession();
};

// What to start a session for: create the pool set `pool_set` (with `create_attributes`, none
// or all zero for a pool without headers) or open it (at `expected_generation`; 0: any), over
// the local `pool`, with `lanes` lanes at most.
struct SessionRequest {
    bool create = false;
    std::string_view pool_set;
    std::span<std::byte> pool;
    unsigned lanes = 1;
    const PoolAttributes* create_attributes = nullptr;
    std::uint64_t expected_generation = 0;
};

// Connects the control channel to `target`, creates or opens the pool and connects the lanes.
// A pool created by a session whose lanes fail to connect is removed again (as PMDK did).
Result<std::unique_ptr<ReplicaSession>>
start_session(const Settings& settings, const Target& target, const SessionRequest& request);

// The lanes to ask for: the caller's wish, capped by RPMEM_MAX_NLANES or, by default, by the
// cores of this machine.
unsigned lanes_to_request(unsigned wanted, const Settings& settings);

// The digests of [offset, offset + length) of the session's remote pool in extents of
// `extent_size` bytes, asked over its control channel in as many DigestRequests as the
// protocol's limits need; `what` names them in errors.
Result<std::vector<std::uint64_t>>
request_digests(channel::Client& control, std::string_view what, std::size_t offset,
                std::size_t length, std::size_t extent_size,
                const std::function<void(std::uint64_t bytes)>& on_progress);

} // namespace rpmem::client
