// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "protocol/byte_reader.h"

namespace rpmem::protocol {

// What a replica's copy of a pool is worth, as rpmemd keeps it next to the pool set (the
// daemon's replica_state_file) and tells it in OpenReply. Wire values are u8.
enum class ReplicaState : std::uint8_t {
    consistent = 1,   // the last session ended cleanly, every persist acknowledged
    inconsistent = 2, // a session is open, one ended uncleanly, or a resync is running
    outdated = 3,     // the initiator went on without this copy (it closed while degraded)
    promoted = 4,     // this copy became a primary (failover); never written as a replica
};

std::optional<ReplicaState> replica_state_from_wire(std::uint8_t value) noexcept;
// "consistent", "inconsistent", "outdated", "promoted".
std::string_view name_of(ReplicaState state) noexcept;
std::optional<ReplicaState> replica_state_from_name(std::string_view name) noexcept;

// A u8 field named "state"; an unknown value fails the reader.
ReplicaState read_replica_state(ByteReader& r);

} // namespace rpmem::protocol
