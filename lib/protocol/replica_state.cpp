// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/replica_state.h"

#include <array>

#include <fmt/format.h>

namespace rpmem::protocol {

namespace {

// Indexed by the wire value; 0 is no state.
constexpr std::array<std::string_view, 5> kStateNames{"", "consistent", "inconsistent", "outdated",
                                                      "promoted"};

} // namespace

std::optional<ReplicaState> replica_state_from_wire(std::uint8_t value) noexcept {
    if (value == 0 || value >= kStateNames.size())
        return std::nullopt;
    return static_cast<ReplicaState>(value);
}

std::string_view name_of(ReplicaState state) noexcept {
    auto index = static_cast<std::size_t>(state);
    return index > 0 && index < kStateNames.size() ? kStateNames[index] : "unknown";
}

std::optional<ReplicaState> replica_state_from_name(std::string_view name) noexcept {
    for (std::size_t i = 1; i < kStateNames.size(); ++i)
        if (kStateNames[i] == name)
            return static_cast<ReplicaState>(i);
    return std::nullopt;
}

ReplicaState read_replica_state(ByteReader& r) {
    auto raw = r.u8("state");
    auto state = replica_state_from_wire(raw);
    r.require(state.has_value(), "state", fmt::format("unknown replica state {}", raw));
    return state.value_or(ReplicaState::inconsistent);
}

} // namespace rpmem::protocol
