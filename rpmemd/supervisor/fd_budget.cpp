// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/fd_budget.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

namespace rpmem::daemon {

namespace {

std::string limit_text(std::uint64_t limit) {
    return limit == UINT64_MAX ? std::string("unlimited") : std::to_string(limit);
}

std::uint64_t from_rlim(rlim_t limit) {
    return limit == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(limit);
}

} // namespace

std::uint64_t descriptors_needed(const Config& config) noexcept {
    return kBaseDescriptors + config.max_pending_connections +
           kDescriptorsPerSession * static_cast<std::uint64_t>(config.max_sessions);
}

FdPlan plan_fd_limit(std::uint64_t needed, std::uint64_t soft, std::uint64_t hard,
                     const Config& config) {
    FdPlan plan;
    plan.needed = needed;
    plan.soft_limit = soft;
    std::string need = fmt::format("{} file descriptors (max-sessions {} x {} + "
                                   "max-pending-connections {} + {})",
                                   needed, config.max_sessions, kDescriptorsPerSession,
                                   config.max_pending_connections, kBaseDescriptors);
    if (soft >= needed) {
        plan.message =
            fmt::format("descriptor limit {} covers the {} needed", limit_text(soft), need);
        return plan;
    }
    if (hard > soft) {
        plan.raise = true;
        plan.soft_limit = std::min(needed, hard);
    }
    plan.enough = plan.soft_limit >= needed;
    if (plan.enough) {
        plan.message = fmt::format("raised the descriptor limit from {} to {} for the {} needed",
                                   limit_text(soft), limit_text(plan.soft_limit), need);
    } else {
        plan.message = fmt::format(
            "the descriptor limit is {} (hard limit {}), short of the {} needed: once it is "
            "reached new connections fail; raise the hard limit (LimitNOFILE= in "
            "rpmemd.service, ulimit -Hn) or lower max-sessions or max-pending-connections",
            limit_text(plan.soft_limit), limit_text(hard), need);
    }
    return plan;
}

void check_fd_budget(const Config& config) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        spdlog::warn("reading RLIMIT_NOFILE: {}", std::strerror(errno));
        return;
    }
    FdPlan plan = plan_fd_limit(descriptors_needed(config), from_rlim(limit.rlim_cur),
                                from_rlim(limit.rlim_max), config);
    if (plan.raise) {
        rlimit raised = limit;
        raised.rlim_cur = static_cast<rlim_t>(plan.soft_limit);
        if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) {
            spdlog::warn("raising RLIMIT_NOFILE to {}: {}; {}", plan.soft_limit,
                         std::strerror(errno), plan.message);
            return;
        }
    }
    if (plan.enough)
        spdlog::info("{}", plan.message);
    else
        spdlog::warn("{}", plan.message);
}

} // namespace rpmem::daemon
