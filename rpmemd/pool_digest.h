// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/error.h"
#include "protocol/request.h"

namespace rpmem::daemon {

// Answers a DigestRequest from the supervisor's mapping of a session's pool (`pool`, the whole
// contiguous range). The request's shape is checked again (protocol::check_digest_request: a
// bounded number of bytes and extents, so one request is a bounded amount of hashing), then
// its range: inside the pool, and not below `protected_prefix` (the target's own header page,
// which differs from the initiator's and which replication never writes). Errors answer with
// Status::invalid_request and name the field ("offset: ...", "length: ..."). Pure: no I/O
// beyond reading the mapped bytes; the caller's session serialises its use.
Result<std::vector<std::uint64_t>> digest_pool_range(std::span<const std::uint8_t> pool,
                                                     std::uint64_t protected_prefix,
                                                     const protocol::DigestRequest& request);

} // namespace rpmem::daemon
