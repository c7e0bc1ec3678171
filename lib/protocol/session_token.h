// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace rpmem::protocol {

inline constexpr std::size_t kSessionTokenLength = 32;

// A one-time secret binding the fabric connections of a session to its control channel: the
// create/open reply carries it to the client, and every lane's connection request carries it
// back (LaneBinding). Never log it.
using SessionToken = std::array<std::uint8_t, kSessionTokenLength>;

// Compares tokens in constant time, so that a wrong guess learns nothing from the time it took.
bool same_token(const SessionToken& a, const SessionToken& b) noexcept;

} // namespace rpmem::protocol
