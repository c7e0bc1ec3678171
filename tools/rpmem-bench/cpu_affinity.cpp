// SPDX-License-Identifier: BSD-3-Clause
#include "cpu_affinity.h"

#include <sched.h>

namespace rpmem::bench {

std::vector<int> usable_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set))
            cpus.push_back(cpu);
    }
    return cpus;
}

bool pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    // pid 0 is the calling thread for sched_setaffinity on Linux.
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

} // namespace rpmem::bench
