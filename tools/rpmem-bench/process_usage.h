// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <vector>

#include <sys/types.h>

namespace rpmem::bench {

// What /proc says of a process (or the sum over several): threads, open descriptors, resident
// memory and CPU time used so far.
struct ProcessUsage {
    std::size_t threads = 0;
    std::size_t fds = 0;
    std::size_t rss_kib = 0;
    double cpu_seconds = 0; // user + system

    static ProcessUsage of(pid_t pid);
    ProcessUsage& operator+=(const ProcessUsage& other) noexcept;
};

// The processes whose parent is `parent` (rpmemd's workers).
std::vector<pid_t> children_of(pid_t parent);

// `pid` and its children, summed.
ProcessUsage usage_with_children(pid_t pid);

} // namespace rpmem::bench
