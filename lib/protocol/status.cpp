// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/status.h"

#include <array>
#include <cerrno>

namespace rpmem::protocol {

namespace {

struct StatusInfo {
    Status status;
    int errno_value;
    std::string_view name;
    std::string_view text;
};

// Indexed by the wire value.
constexpr std::array<StatusInfo, kMaxStatusValue + 1> kStatusTable{{
    {Status::ok, 0, "ok", "Success"},
    {Status::protocol_mismatch, EPROTONOSUPPORT, "protocol_mismatch",
     "Protocol version number mismatch"},
    {Status::bad_name, EINVAL, "bad_name", "Invalid pool descriptor"},
    {Status::bad_size, EFBIG, "bad_size", "Invalid pool size"},
    {Status::bad_lanes, EINVAL, "bad_lanes", "Invalid number of lanes"},
    {Status::bad_provider, EINVAL, "bad_provider", "Invalid provider"},
    {Status::fatal, EREMOTEIO, "fatal", "Fatal error"},
    {Status::fatal_connection, ECONNABORTED, "fatal_connection", "Fatal in-band connection error"},
    {Status::busy, EBUSY, "busy", "Pool already in use"},
    {Status::exists, EEXIST, "exists", "Pool already exists"},
    {Status::provider_unsupported, EMEDIUMTYPE, "provider_unsupported", "Provider not supported"},
    {Status::no_exist, ENOENT, "no_exist",
     "Pool set or its part doesn't exist or it is unavailable"},
    {Status::no_access, EACCES, "no_access", "Pool set permission denied"},
    {Status::pool_config, EINVAL, "pool_config", "Invalid pool set configuration"},
    {Status::not_permitted, EPERM, "not_permitted", "Client identity not permitted"},
    {Status::bad_message, EPROTO, "bad_message", "Malformed or unexpected message"},
    {Status::invalid_request, EINVAL, "invalid_request", "Invalid request"},
    {Status::no_space, ENOSPC, "no_space", "No space left for the pool"},
    {Status::not_supported, EOPNOTSUPP, "not_supported", "Operation not supported by the target"},
    {Status::split_brain, ESTALE, "split_brain",
     "The replica is promoted or at another generation"},
}};

const StatusInfo& info(Status status) noexcept {
    auto index = static_cast<std::size_t>(status);
    return index < kStatusTable.size() ? kStatusTable[index] : kStatusTable[6]; // fatal
}

} // namespace

int errno_of(Status status) noexcept {
    return info(status).errno_value;
}

Status status_of(int errno_value) noexcept {
    switch (errno_value) {
    case 0:
        return Status::ok;
    case EINVAL:
        return Status::invalid_request;
    case EWOULDBLOCK: // flock() on a pool set held by another session; EAGAIN on Linux
        return Status::busy;
    default:
        break;
    }
    for (const auto& entry : kStatusTable) {
        // EINVAL was settled above, so the first match is the only one.
        if (entry.errno_value == errno_value)
            return entry.status;
    }
    return Status::fatal;
}

std::string_view name_of(Status status) noexcept {
    return info(status).name;
}

std::string_view text_of(Status status) noexcept {
    return info(status).text;
}

std::optional<Status> status_from_wire(std::uint16_t value) noexcept {
    if (value > kMaxStatusValue)
        return std::nullopt;
    return static_cast<Status>(value);
}

} // namespace rpmem::protocol
