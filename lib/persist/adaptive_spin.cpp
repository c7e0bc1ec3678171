// SPDX-License-Identifier: BSD-3-Clause
#include "persist/adaptive_spin.h"

namespace rpmem::persist {

std::chrono::nanoseconds AdaptiveSpin::budget() const noexcept {
    if (!adapts() || spinning_)
        return ceiling_;
    // Blocking: the next wait is a probe when its turn came.
    return since_probe_ + 1 >= kProbeEvery ? ceiling_ : std::chrono::nanoseconds::zero();
}

void AdaptiveSpin::record(std::chrono::nanoseconds waited,
                          std::chrono::nanoseconds budget) noexcept {
    if (!adapts())
        return;
    const bool probe = !spinning_ && budget > std::chrono::nanoseconds::zero();
    if (!spinning_ && !probe) {
        ++since_probe_;
        return;
    }
    since_probe_ = 0;
    // An average over about 8 waits: one slow reply does not stop the spinning, a run of them
    // does.
    const std::int64_t sample = waited.count();
    average_ns_ = probe ? sample : average_ns_ + (sample - average_ns_) / 8;
    spinning_ = average_ns_ <= ceiling_.count();
}

} // namespace rpmem::persist
