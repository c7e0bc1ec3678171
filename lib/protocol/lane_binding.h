// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "protocol/session_token.h"

namespace rpmem::protocol {

// What a lane's connection request carries as private data: the session's one-time token
// (learnt over the TLS channel) and the lane's index. The target admits a connection only when
// both match a session's grant, which binds every fabric connection to one TLS session and to
// that session's registered pool. Layout: "RPML" magic, u32 version (1), 32-byte token, u32
// lane (little-endian).
struct LaneBinding {
    SessionToken token{};
    std::uint32_t lane = 0;
};

inline constexpr std::size_t kLaneBindingSize = 4 + 4 + kSessionTokenLength + 4;

std::array<std::byte, kLaneBindingSize> encode(const LaneBinding& binding) noexcept;

// EPROTO for anything but a well-formed binding of this version.
Result<LaneBinding> decode_lane_binding(std::span<const std::byte> data);

} // namespace rpmem::protocol
