// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/request.h"

#include <algorithm>
#include <bit>
#include <limits>

#include <fmt/format.h>

#include "protocol/message_limits.h"

namespace rpmem::protocol {

std::optional<ResyncPhase> resync_phase_from_wire(std::uint8_t value) noexcept {
    if (value >= static_cast<std::uint8_t>(ResyncPhase::started) &&
        value <= static_cast<std::uint8_t>(ResyncPhase::failed))
        return static_cast<ResyncPhase>(value);
    return std::nullopt;
}

std::string_view name_of(ResyncPhase phase) noexcept {
    switch (phase) {
    case ResyncPhase::started:
        return "started";
    case ResyncPhase::progress:
        return "progress";
    case ResyncPhase::finished:
        return "finished";
    case ResyncPhase::failed:
        return "failed";
    }
    return "unknown";
}

MessageType type_of(const Request& request) noexcept {
    return std::visit([](const auto& message) { return message.kType; }, request);
}

std::optional<FieldProblem> check_digest_extent_size(std::uint64_t extent_size) {
    if (std::has_single_bit(extent_size) && extent_size >= kMinDigestExtentSize &&
        extent_size <= kMaxDigestExtentSize)
        return std::nullopt;
    return FieldProblem{"extent_size",
                        fmt::format("{} is not a power of two from {} to {}", extent_size,
                                    kMinDigestExtentSize, kMaxDigestExtentSize)};
}

std::uint64_t digest_request_span(std::uint32_t extent_size) noexcept {
    return std::min<std::uint64_t>(std::uint64_t{extent_size} * kMaxDigestExtents,
                                   kMaxDigestRangeLength);
}

std::optional<FieldProblem> check_digest_request(const DigestRequest& request) {
    if (auto problem = check_digest_extent_size(request.extent_size))
        return problem;
    if (request.length == 0)
        return FieldProblem{"length", "0: an empty range has no digests"};
    if (request.length > digest_request_span(request.extent_size))
        return FieldProblem{"length",
                            fmt::format("{} bytes exceed what one request may cover with "
                                        "extents of {} ({} bytes: at most {} extents and {} bytes)",
                                        request.length, request.extent_size,
                                        digest_request_span(request.extent_size), kMaxDigestExtents,
                                        kMaxDigestRangeLength)};
    if (request.offset > std::numeric_limits<std::uint64_t>::max() - request.length)
        return FieldProblem{
            "offset", fmt::format("{} + length {} overflows", request.offset, request.length)};
    return std::nullopt;
}

} // namespace rpmem::protocol
