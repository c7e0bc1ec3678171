// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/pool_set.h"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <set>
#include <string_view>

#include "poolset/parser.h"

namespace rpmem::poolset {

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    return a > kMax - b ? kMax : a + b;
}

std::string where(const PoolSet& set, std::size_t line) {
    std::string text = set.origin;
    text += ':';
    text += std::to_string(line);
    text += ": ";
    return text;
}

tl::unexpected<Error> invalid(const PoolSet& set, std::size_t line, std::string_view what) {
    std::string message = where(set, line);
    message += what;
    return fail(EINVAL, std::move(message));
}

Result<void> check_common(const PoolSet& set, SizeLimits limits) {
    if (set.options.single_header && set.options.no_headers)
        return invalid(set, set.replicas.empty() ? 1 : set.replicas.front().line,
                       "OPTION SINGLEHDR and OPTION NOHDRS exclude each other");

    std::set<std::string_view> paths;
    for (std::size_t r = 0; r < set.replicas.size(); ++r) {
        const ReplicaSpec& replica = set.replicas[r];
        if (replica.is_remote())
            continue;
        for (const Part& part : replica.parts) {
            if (!paths.insert(part.path).second)
                return invalid(set, part.line,
                               "part '" + part.path + "' is listed more than once in the set");
            if (part.size && *part.size < limits.min_part_size)
                return invalid(set, part.line,
                               "part '" + part.path + "' has " + format_size(*part.size) +
                                   ", less than the minimum part size of " +
                                   format_size(limits.min_part_size));
        }
        auto net = set.net_size(replica);
        if (net && *net < limits.min_pool_size)
            return invalid(set, replica.line,
                           "replica " + std::to_string(r) + " has a net pool size of " +
                               format_size(*net) + ", less than the minimum of " +
                               format_size(limits.min_pool_size));
    }
    return {};
}

} // namespace

std::size_t PoolSet::header_count(const ReplicaSpec& replica) const noexcept {
    if (options.single_header)
        return 1;
    if (options.no_headers)
        return 0;
    return replica.parts.size();
}

std::uint64_t PoolSet::skipped_header_bytes(std::size_t part_index) const noexcept {
    if (part_index == 0 || options.single_header || options.no_headers)
        return 0;
    return kHeaderSize;
}

std::optional<std::uint64_t> PoolSet::net_size(const ReplicaSpec& replica) const noexcept {
    if (replica.is_remote())
        return std::nullopt;
    std::uint64_t total = 0;
    for (const Part& part : replica.parts) {
        if (!part.size)
            return std::nullopt;
        total = saturating_add(total, *part.size & ~(kMappingAlignment - 1));
    }
    std::size_t headers = header_count(replica);
    if (headers > 1) {
        std::uint64_t extra = (headers - 1) * kHeaderSize;
        total = total > extra ? total - extra : 0;
    }
    return total;
}

std::optional<std::uint64_t> PoolSet::pool_size() const noexcept {
    std::optional<std::uint64_t> smallest;
    for (const ReplicaSpec& replica : replicas) {
        if (replica.is_remote())
            continue;
        auto net = net_size(replica);
        if (!net)
            return std::nullopt;
        if (!smallest || *net < *smallest)
            smallest = net;
    }
    return smallest;
}

bool PoolSet::has_remote_replicas() const noexcept {
    return std::any_of(replicas.begin(), replicas.end(),
                       [](const ReplicaSpec& replica) { return replica.is_remote(); });
}

Result<void> validate_local(const PoolSet& set, SizeLimits limits) {
    if (set.options.no_headers)
        return invalid(set, set.replicas.empty() ? 1 : set.replicas.front().line,
                       "OPTION NOHDRS is only for sets served by rpmemd, not for local pools");
    return check_common(set, limits);
}

Result<void> validate_for_target(const PoolSet& set) {
    if (set.replicas.size() > 1) {
        const ReplicaSpec& extra = set.replicas[1];
        return invalid(set, extra.line,
                       extra.is_remote() ? "a set served by rpmemd must not contain remote replicas"
                                         : "a set served by rpmemd must not contain replicas");
    }
    return check_common(set, kTargetLimits);
}

} // namespace rpmem::poolset
