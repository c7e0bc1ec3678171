// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"
#include "rpmemd/supervisor/config.h"

namespace rpmem::daemon {

// How many file descriptors rpmemd needs for its configured limits, and what to do about its
// RLIMIT_NOFILE. Out of descriptors, accept() fails and a legitimate client cannot get in, so
// the limit must cover every place the config promises.
//
// The estimate per session is that of the process that spends the most on it, as each has the
// same limit and one identity's worker may serve every session. In the supervisor: the TLS
// socket, the worker's control socket and the part files of its pool (kPartFilesPerSession, a
// generous guess: most pool sets have a few parts; one with more makes the estimate short, not
// wrong). In the worker: the same part files, and the session's fabric (kFabricDescriptors:
// the epoll sets and signalling pairs of its event and completion queues, the listener; 8 with
// tcp, measured by the rpmemd_many_sessions test) plus one socket per lane (one counted).
// Plus one per pending connection and kBaseDescriptors for everything else (log, listeners,
// epoll and eventfds of Asio and libfabric, the pool set directories, stdio, responders'
// wake-up pipes).
inline constexpr std::uint64_t kBaseDescriptors = 64;
inline constexpr std::uint64_t kPartFilesPerSession = 8;
inline constexpr std::uint64_t kFabricDescriptors = 8;
inline constexpr std::uint64_t kDescriptorsPerSession =
    kFabricDescriptors + kPartFilesPerSession + 1;

std::uint64_t descriptors_needed(const Config& config) noexcept;

// What to do with a soft and hard limit (RLIM_INFINITY as UINT64_MAX) for `needed`: keep the
// soft limit, raise it (never beyond the hard limit), or warn that even the hard limit is short.
struct FdPlan {
    std::uint64_t needed = 0;
    std::uint64_t soft_limit = 0; // the soft limit to set (unchanged when enough)
    bool raise = false;           // set soft_limit
    bool enough = true;           // the limit (after raising) covers `needed`
    std::string message;          // for the log: what was done, or what to change
};

FdPlan plan_fd_limit(std::uint64_t needed, std::uint64_t soft, std::uint64_t hard,
                     const Config& config);

// Reads RLIMIT_NOFILE, raises the soft limit as plan_fd_limit() says and logs the outcome (a
// warning naming the keys and LimitNOFILE= when it falls short). Never fails the start: a
// daemon short of descriptors still serves what fits.
void check_fd_budget(const Config& config);

} // namespace rpmem::daemon
