// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/error.h"
#include "protocol/request.h"

namespace rpmem::daemon {

// Answering a DigestRequest from the supervisor's mapping of a session's pool. Pure functions;
// the caller's session serialises their use.

// Checks the request's shape again (protocol::check_digest_request: a bounded number of bytes
// and extents, so one request is a bounded amount of hashing), then its range against a pool
// of `pool_size` bytes: inside it, and not below `protected_prefix` (the target's own header
// page, which differs from the initiator's and which replication never writes). Errors answer
// with Status::invalid_request and name the field ("offset: ...", "length: ...").
Result<void> check_digest_range(std::uint64_t pool_size, std::uint64_t protected_prefix,
                                const protocol::DigestRequest& request);

// The digests of a request check_digest_range accepted, from `pool` (the whole contiguous
// range).
std::vector<std::uint64_t> digest_pool_range(std::span<const std::uint8_t> pool,
                                             const protocol::DigestRequest& request);

} // namespace rpmem::daemon
