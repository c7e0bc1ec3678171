// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/pool_digest.h"

#include <fmt/format.h>

#include "protocol/extent_digest.h"
#include "rpmemd/supervisor/status_error.h"

namespace rpmem::daemon {

namespace {

Error invalid(std::string_view field, std::string reason) {
    return status_error(protocol::Status::invalid_request, fmt::format("{}: {}", field, reason));
}

} // namespace

Result<void> check_digest_range(std::uint64_t pool_size, std::uint64_t protected_prefix,
                                const protocol::DigestRequest& request) {
    if (auto problem = protocol::check_digest_request(request))
        return fail(invalid(problem->field, std::move(problem->reason)));
    if (request.offset < protected_prefix)
        return fail(invalid("offset", fmt::format("{} is inside the pool header (the first {} "
                                                  "bytes), which replication does not write",
                                                  request.offset, protected_prefix)));
    if (request.offset >= pool_size)
        return fail(invalid(
            "offset", fmt::format("{} is beyond the pool of {} bytes", request.offset, pool_size)));
    if (request.length > pool_size - request.offset)
        return fail(invalid("length", fmt::format("[{}, +{}) ends beyond the pool of {} bytes",
                                                  request.offset, request.length, pool_size)));
    return {};
}

std::vector<std::uint64_t> digest_pool_range(std::span<const std::uint8_t> pool,
                                             const protocol::DigestRequest& request) {
    return protocol::extent_digests(std::as_bytes(pool.subspan(request.offset, request.length)),
                                    request.extent_size);
}

} // namespace rpmem::daemon
