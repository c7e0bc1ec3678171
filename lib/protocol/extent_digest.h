// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rpmem::protocol {

// What a digest in a DigestReply is, computed by the target over its pool and by the initiator
// over its own, so that both ends agree bit for bit: XXH3-64 with seed 0 of one extent's bytes.
// Pure functions, safe from any thread.

// The digest of one extent.
std::uint64_t extent_digest(std::span<const std::byte> extent) noexcept;

// The digests of `bytes` cut into extents of `extent_size` bytes (> 0) from its start, the
// last one shorter when `bytes` is not a multiple; empty for empty `bytes`.
std::vector<std::uint64_t> extent_digests(std::span<const std::byte> bytes,
                                          std::size_t extent_size);

} // namespace rpmem::protocol
