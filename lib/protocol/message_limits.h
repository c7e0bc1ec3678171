// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>

namespace rpmem::protocol {

// Hard limits on everything that comes off the wire. Both ends enforce the same numbers: the
// encoder refuses to produce a frame the decoder would reject, and the decoder checks each
// length against them before it allocates or copies anything.

// A whole frame, header included. The largest legitimate frames are a StatusReply listing
// kMaxStatusSessions sessions and an EventsReply of kMaxEventsPerReply events, all with names
// of maximal length; every request is far smaller, and the per-type limits in message_type.h
// keep a server's allocation per request to a few KiB.
inline constexpr std::size_t kMaxFrameSize = 128 * 1024;

inline constexpr std::size_t kMaxPoolSetNameLength = 4095; // PATH_MAX without the NUL
inline constexpr std::size_t kMaxMessageLength = 2048;     // human-readable text in a reply
inline constexpr std::size_t kMaxHostLength = 255;         // fabric address (DNS name or IP)
inline constexpr std::size_t kMaxProviderNameLength = 64;  // libfabric provider name
inline constexpr std::size_t kMaxSoftwareLength = 64;      // "rpmemd 0.1.0"
inline constexpr std::size_t kMaxIdentityLength = 256;     // certificate identity (CN)
inline constexpr std::size_t kMaxPeerLength = 80;          // "address:port" of a client
inline constexpr std::size_t kMaxStatusSessions = 16;      // sessions in one StatusReply
inline constexpr std::size_t kMaxEventsPerReply = 16;      // events in one EventsReply
// How many events rpmemd keeps for rpmemctl events; older ones are dropped (the reply says so).
inline constexpr std::size_t kEventLogCapacity = 4096;

// A DigestRequest: extents are a power of two between the two sizes; one request covers at most
// kMaxDigestExtents extents (its reply's digests, 64 KiB, fit a frame) and at most
// kMaxDigestRangeLength bytes, so that the hashing one request holds a session's handler for is
// bounded: about 0.1 s from memory, under 2 s even when the pages come from a slow disk
// (80 MB/s), well inside a client's request timeout. Clients split longer ranges.
inline constexpr std::uint32_t kMinDigestExtentSize = 4 << 10;
inline constexpr std::uint32_t kMaxDigestExtentSize = 64 << 20;
inline constexpr std::size_t kMaxDigestExtents = 8192;
inline constexpr std::uint64_t kMaxDigestRangeLength = 128ULL << 20;

} // namespace rpmem::protocol
