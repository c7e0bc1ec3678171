// SPDX-License-Identifier: BSD-3-Clause
#include "process_cpu.h"

#include <sys/resource.h>
#include <unistd.h>

#include "process_usage.h"

namespace rpmem::bench {

namespace {

double seconds_of(const rusage& usage) noexcept {
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

} // namespace

double process_cpu_seconds() noexcept {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return seconds_of(usage);
}

double thread_cpu_seconds() noexcept {
    rusage usage{};
    ::getrusage(RUSAGE_THREAD, &usage);
    return seconds_of(usage);
}

double process_tree_cpu_seconds(pid_t pid) {
    return usage_with_children(pid).cpu_seconds;
}

} // namespace rpmem::bench
