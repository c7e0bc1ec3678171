// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>

namespace rpmem::fabric {

// How long a waiter busy-polls before it blocks, learnt from the waits it just did. Spinning
// pays when work arrives within the spin: it saves the wake-up of a blocking wait (tens of
// microseconds here) at the price of the CPU it burns, which on a small machine is taken from
// the very peer that would produce the work. So the budget follows the recent gaps:
// - work that came after `waited` no longer than the ceiling raises the budget to cover such a
//   gap with room (1.5 x waited), never above the ceiling;
// - work that came later than the ceiling (or never) halves the budget, down to zero: an idle
//   or slow-paced waiter then blocks at once and costs no CPU.
// A ceiling of zero never spins; nanoseconds::max() always spins (no adaptation). Pure
// arithmetic, no clock: the owner measures `waited`. Not thread-safe (one waiter's).
class SpinBudget {
public:
    explicit SpinBudget(std::chrono::nanoseconds ceiling) noexcept { set_ceiling(ceiling); }

    // Spin this long before blocking.
    std::chrono::nanoseconds current() const noexcept { return current_; }
    std::chrono::nanoseconds ceiling() const noexcept { return ceiling_; }
    bool spins_forever() const noexcept { return ceiling_ == std::chrono::nanoseconds::max(); }

    // A new ceiling; the budget starts there (a fresh waiter first assumes spinning pays).
    void set_ceiling(std::chrono::nanoseconds ceiling) noexcept;

    // A wait ended with work after `waited` (spinning or blocked).
    void on_work(std::chrono::nanoseconds waited) noexcept;
    // A wait ended without work (the waiter's slice or deadline passed): as a late arrival.
    void on_idle() noexcept { shrink(); }

    // Below this the budget is zero: a spin that short catches nothing a blocking wait would
    // not catch as fast.
    static constexpr std::chrono::nanoseconds kFloor{1000};

private:
    void shrink() noexcept;

    std::chrono::nanoseconds ceiling_{0};
    std::chrono::nanoseconds current_{0};
};

} // namespace rpmem::fabric
