// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>

namespace rpmem::fabric {

// Every wait in the fabric layer ends at a point of the monotonic clock.
using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline deadline_after(Clock::duration timeout) {
    return Clock::now() + timeout;
}

// Milliseconds left until `deadline`, rounded up (a poll() of 0 ms would spin), at most `cap`,
// 0 once it has passed.
inline int milliseconds_until(Deadline deadline, std::chrono::milliseconds cap) {
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero())
        return 0;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(left);
    if (ms > cap)
        ms = cap;
    return static_cast<int>(ms.count());
}

} // namespace rpmem::fabric
