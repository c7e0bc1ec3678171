// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>

namespace rpmem::persist {

// How long an initiator lane busy-polls its completion queue before blocking on the queue's
// wait object, adapted to whether spinning pays. Spinning answers a completion at once but burns
// a core; on a machine whose cores the program and the daemons share (or where replies are slow),
// a spinning client takes the CPU the replies need. So: spin up to the configured ceiling while
// the lane's recent waits (a moving average) end within it, and block at once while they do not.
// Blocking waits measure the wake-up too, so while blocking only every kProbeEvery-th wait spins
// (a probe) and only probes update the average: one quick probe turns spinning back on.
//
// A ceiling of zero never spins; kForever always spins (both fixed). Owned by one lane, used by
// its one thread; no I/O, no clock of its own (tested directly).
class AdaptiveSpin {
public:
    static constexpr std::chrono::nanoseconds kForever = std::chrono::nanoseconds::max();
    static constexpr std::uint32_t kProbeEvery = 32;

    explicit AdaptiveSpin(std::chrono::nanoseconds ceiling) noexcept
        : ceiling_(ceiling)
        , average_ns_(0) {}

    // The spin budget of the next wait.
    std::chrono::nanoseconds budget() const noexcept;
    // What one wait took, from its start to the completion it waited for; `budget` is what it
    // was given (budget() before it).
    void record(std::chrono::nanoseconds waited, std::chrono::nanoseconds budget) noexcept;
    // Whether waits spin now (for reports and tests).
    bool spinning() const noexcept { return spinning_; }

private:
    bool adapts() const noexcept {
        return ceiling_ > std::chrono::nanoseconds::zero() && ceiling_ != kForever;
    }

    std::chrono::nanoseconds ceiling_;
    std::int64_t average_ns_; // moving average of the waits that count
    bool spinning_ = true;
    std::uint32_t since_probe_ = 0;
};

} // namespace rpmem::persist
