// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <sys/types.h>

namespace rpmem::bench {

// CPU time (user + system, seconds) for "CPU per operation" next to latencies: take one before
// and one after a row, divide the difference by the operations.

// This process, all its threads.
double process_cpu_seconds() noexcept;
// The calling thread.
double thread_cpu_seconds() noexcept;
// `pid` and its live children (rpmemd and its data-path workers), from /proc/PID/stat; a process
// that is gone counts 0.
double process_tree_cpu_seconds(pid_t pid);

} // namespace rpmem::bench
