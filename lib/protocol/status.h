// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rpmem::protocol {

// The outcome of a request as carried in every reply. Values 0..13 keep the numbers and the
// errno of PMDK's RPMEM_SUCCESS..RPMEM_ERR_POOL_CFG, so that librpmem's callers see the same
// errno for the same situation; 14 and above are ours. Each status maps onto exactly one errno
// (errno_of); several statuses share EINVAL as they did in PMDK.
enum class Status : std::uint16_t {
    ok = 0,
    protocol_mismatch = 1,     // EPROTONOSUPPORT: no common protocol version
    bad_name = 2,              // EINVAL: invalid pool set name
    bad_size = 3,              // EFBIG: pool size too small or larger than the remote pool
    bad_lanes = 4,             // EINVAL: invalid number of lanes
    bad_provider = 5,          // EINVAL: invalid or unknown provider
    fatal = 6,                 // EREMOTEIO: any other failure on the target
    fatal_connection = 7,      // ECONNABORTED: the target could not set up the fabric side
    busy = 8,                  // EBUSY: the pool set is in use by another session
    exists = 9,                // EEXIST: the pool already exists
    provider_unsupported = 10, // EMEDIUMTYPE: the provider is not offered by the target
    no_exist = 11,             // ENOENT: pool set or one of its parts does not exist
    no_access = 12,            // EACCES: permission denied on the pool set
    pool_config = 13,          // EINVAL: invalid pool set configuration
    not_permitted = 14,        // EPERM: the client identity may not do this
    bad_message = 15,          // EPROTO: a malformed or unexpected message
    invalid_request = 16,      // EINVAL: a well-formed request that makes no sense now
    no_space = 17,             // ENOSPC: no room for the pool on the target
    not_supported = 18,        // EOPNOTSUPP: a requested method or feature is not offered
    split_brain = 19,          // ESTALE: the replica is promoted or at another generation
};

inline constexpr std::uint16_t kMaxStatusValue = 19;

// The positive errno the client reports for `status`; 0 for Status::ok.
int errno_of(Status status) noexcept;

// The status a server replies with for a failure with `errno_value`: the inverse of errno_of
// where it is one-to-one, PMDK rpmemd's choices where it is not (EINVAL -> invalid_request,
// EWOULDBLOCK -> busy), Status::fatal for anything unknown, Status::ok for 0.
Status status_of(int errno_value) noexcept;

// "protocol_mismatch", ...; for logs and messages.
std::string_view name_of(Status status) noexcept;

// The default human-readable text, as PMDK worded it where PMDK had the status.
std::string_view text_of(Status status) noexcept;

// The Status with this wire value, or nothing for an unknown value.
std::optional<Status> status_from_wire(std::uint16_t value) noexcept;

} // namespace rpmem::protocol
