// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>

namespace rpmem::protocol {

// The control protocol version this build speaks. A peer states the range it supports in its
// Hello; the server picks the highest version both sides support or answers with
// Status::protocol_mismatch. Version 2 added the replica state (generation and state in the
// create and open replies, expected_generation in open, in_sync in close); version 1 was never
// released, so this build speaks 2 only.
inline constexpr std::uint16_t kProtocolVersion = 2;
inline constexpr std::uint16_t kMinProtocolVersion = 2;

// The negotiation rule, for both ends. The server: do a client's [min, max] and this build's
// range meet? The client: is the version the server chose one this build offered?
constexpr bool ranges_meet(std::uint16_t peer_min, std::uint16_t peer_max) noexcept {
    return peer_min <= kProtocolVersion && peer_max >= kMinProtocolVersion && peer_min <= peer_max;
}
constexpr bool speaks(std::uint16_t version) noexcept {
    return version >= kMinProtocolVersion && version <= kProtocolVersion;
}
// The server's choice for a client's range that meets this build's: the highest version both
// speak.
constexpr std::uint16_t agreed_version(std::uint16_t peer_min, std::uint16_t peer_max) noexcept {
    (void)peer_min;
    return peer_max < kProtocolVersion ? peer_max : kProtocolVersion;
}

// Optional features a peer announces in its Hello as a bit set; the server answers with the
// bits both sides share. Unknown bits are ignored, which is what lets a newer peer add bits
// without a version change.
enum class Capability : std::uint64_t {
    heartbeat = 1ULL << 0,  // answers Ping with Pong at any time, even while a request runs
    status = 1ULL << 1,     // understands StatusRequest
    flush_list = 1ULL << 2, // its lanes take LaneOperation::flush_list
    // its lanes take LaneOperation::persist_records (asynchronous replication)
    ordered_records = 1ULL << 3,
};

inline constexpr std::uint64_t kCapabilities =
    static_cast<std::uint64_t>(Capability::heartbeat) |
    static_cast<std::uint64_t>(Capability::status) |
    static_cast<std::uint64_t>(Capability::flush_list) |
    static_cast<std::uint64_t>(Capability::ordered_records);

constexpr bool has_capability(std::uint64_t set, Capability capability) noexcept {
    return (set & static_cast<std::uint64_t>(capability)) != 0;
}
// What the server answers a peer that announced `peer`: the bits both sides have.
constexpr std::uint64_t shared_capabilities(std::uint64_t peer) noexcept {
    return peer & kCapabilities;
}
// The client's check of that answer: nothing it did not offer.
constexpr bool offered_all(std::uint64_t answered) noexcept {
    return (answered & ~kCapabilities) == 0;
}

} // namespace rpmem::protocol
