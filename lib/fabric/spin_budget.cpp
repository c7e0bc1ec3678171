// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/spin_budget.h"

#include <algorithm>

namespace rpmem::fabric {

void SpinBudget::set_ceiling(std::chrono::nanoseconds ceiling) noexcept {
    ceiling_ = std::max(ceiling, std::chrono::nanoseconds::zero());
    current_ = ceiling_;
}

void SpinBudget::on_work(std::chrono::nanoseconds waited) noexcept {
    if (spins_forever())
        return;
    if (waited > ceiling_) {
        shrink();
        return;
    }
    const auto wanted = std::max(waited + waited / 2, kFloor);
    current_ = std::min(ceiling_, std::max(current_, wanted));
}

void SpinBudget::shrink() noexcept {
    if (spins_forever())
        return;
    current_ /= 2;
    if (current_ < kFloor)
        current_ = std::chrono::nanoseconds::zero();
}

} // namespace rpmem::fabric
