// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <vector>

namespace rpmem::bench {

// The CPUs this process may run on (sched_getaffinity), in order.
std::vector<int> usable_cpus();

// Pins the calling thread to `cpu`; false when the kernel refuses (then it runs anywhere).
bool pin_current_thread(int cpu);

} // namespace rpmem::bench
