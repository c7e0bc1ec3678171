// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "base/target.h"
#include "client/settings.h"
#include "protocol/reply.h"

namespace rpmem::client {

// The failover requests an operator (rpmemctl) or a cluster agent sends to rpmemd. Each opens
// its own control channel; the daemon answers only identities in its admin-client list. Errors
// name the target, the pool set and the step, with the daemon's message.

// Makes the replica `pool_set` on `target` a primary (fences its session, moves its generation
// on, rewrites its headers); `force` accepts a replica that is not up to date.
Result<protocol::PromoteReply> promote(const Settings& settings, const Target& target,
                                       std::string_view pool_set, bool force);

// Undoes a promote nothing used; `generation` 0: whichever.
Result<protocol::DemoteReply> demote(const Settings& settings, const Target& target,
                                     std::string_view pool_set, std::uint64_t generation);

// The set's state, generation and UUIDs, without changing anything (busy while it is open).
Result<protocol::AttachReplicaReply> describe(const Settings& settings, const Target& target,
                                              std::string_view pool_set);

// What rejoin did: the new primary as it is now linked, and the old primary's pool as a
// replica (outdated at the new primary's generation, resynced by the new primary's next open).
struct RejoinOutcome {
    protocol::AttachReplicaReply primary;
    protocol::RejoinReply replica;
};

// Turns the old primary's pool `replica_set` (served by rpmemd at `replica_target`) into a
// replica of the promoted `primary_set` at `primary_target`: reads the new primary's identity,
// makes the old pool a replica at its generation (its headers must name the same pool set and
// link to the new primary), then links the new primary's headers to it.
Result<RejoinOutcome> rejoin(const Settings& settings, const Target& primary_target,
                             std::string_view primary_set, const Target& replica_target,
                             std::string_view replica_set);

} // namespace rpmem::client
