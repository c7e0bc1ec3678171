// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/wait_controller.h"

#include <algorithm>

#include <sys/resource.h>

namespace rpmem::fabric {

std::chrono::nanoseconds WaitController::spin_budget() const noexcept {
    if (spins_forever())
        return kForever;
    if (ceiling_ == std::chrono::nanoseconds::zero() || backoff_left_ > 0 || gap_count_ == 0)
        return std::chrono::nanoseconds::zero();
    const std::int64_t longest = *std::max_element(gaps_.begin(), gaps_.begin() + gap_count_);
    const std::chrono::nanoseconds wanted{std::max(longest + longest / 4, kFloor.count())};
    return std::min(wanted, ceiling_);
}

void WaitController::set_ceiling(std::chrono::nanoseconds ceiling) noexcept {
    ceiling_ = std::max(ceiling, std::chrono::nanoseconds::zero());
}

void WaitController::count_wait() noexcept {
    if (backoff_left_ > 0)
        --backoff_left_;
}

void WaitController::on_work(std::chrono::nanoseconds gap) noexcept {
    count_wait();
    if (spins_forever())
        return;
    if (gap > ceiling_) {
        if (++long_gaps_ >= kQuietAfter)
            forget_gaps(); // a quiet waiter blocks at once
        return;
    }
    long_gaps_ = 0;
    gaps_[next_gap_] = gap.count();
    next_gap_ = (next_gap_ + 1) % kWindow;
    gap_count_ = std::min(gap_count_ + 1, kWindow);
}

void WaitController::on_idle() noexcept {
    count_wait();
    long_gaps_ = kQuietAfter;
    forget_gaps();
}

void WaitController::forget_gaps() noexcept {
    gap_count_ = 0;
    next_gap_ = 0; // the window fills from its start again
}

bool WaitController::gather_spin(std::chrono::nanoseconds spun,
                                 std::chrono::nanoseconds stolen) noexcept {
    spun_ns_ += spun.count();
    stolen_ns_ += std::min(stolen, spun).count();
    return spun_ns_ >= kShareWindow.count();
}

void WaitController::judge_window(std::uint32_t preemptions) noexcept {
    const bool contended = stolen_ns_ * 5 > spun_ns_ || preemptions >= kContendedPreemptions;
    spun_ns_ = stolen_ns_ = 0;
    if (contended) {
        backoff_left_ = backoff_;
        backoff_ = std::min(backoff_ * 2, kMaxBackoffWaits);
    } else {
        backoff_ = std::max(backoff_ / 2, kBackoffWaits);
    }
}

std::uint32_t Preemptions::since_last() noexcept {
    rusage usage{};
    if (::getrusage(RUSAGE_THREAD, &usage) != 0)
        return 0;
    const long now = usage.ru_nivcsw;
    const long since = now - last_;
    last_ = now;
    if (const auto reader = std::this_thread::get_id(); reader != reader_) {
        reader_ = reader;
        return 0;
    }
    return since > 0 ? static_cast<std::uint32_t>(since) : 0;
}

} // namespace rpmem::fabric
