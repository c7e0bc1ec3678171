// SPDX-License-Identifier: BSD-3-Clause
#include "base/log_rate_limiter.h"

#include <algorithm>

#include <fmt/format.h>

namespace rpmem {

std::string LogRateLimiter::Summary::text(std::string_view what, std::string_view things) const {
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(window).count();
    std::string line = fmt::format("{} {} {} in the last {} s ({} not logged one by one)", what,
                                   events, things, seconds, suppressed);
    const char* separator = ": ";
    for (const auto& [reason, count] : reasons) {
        line += fmt::format("{}{} {}", separator, count, reason);
        separator = ", ";
    }
    return line;
}

LogRateLimiter::LogRateLimiter(std::size_t burst, std::chrono::steady_clock::duration interval,
                               Now clock)
    : burst_(burst)
    , interval_(interval)
    , clock_(std::move(clock)) {}

void LogRateLimiter::close_window_if_over(std::chrono::steady_clock::time_point now, bool force) {
    if (!open_ || (!force && now - window_start_ < interval_))
        return;
    open_ = false;
    if (suppressed_ == 0)
        return;
    // A window opening within an interval of this one's end is part of the same flood.
    flood_until_ = window_start_ + 2 * interval_;
    Summary summary;
    summary.events = events_;
    summary.suppressed = suppressed_;
    summary.window = force ? std::min(now - window_start_, interval_) : interval_;
    summary.reasons = std::move(reasons_);
    std::stable_sort(summary.reasons.begin(), summary.reasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    // An older summary nobody took is folded into this one rather than lost.
    if (finished_) {
        summary.events += finished_->events;
        summary.suppressed += finished_->suppressed;
        summary.window += finished_->window;
        for (const auto& [reason, count] : finished_->reasons)
            summary.reasons.emplace_back(reason, count);
    }
    finished_ = std::move(summary);
    reasons_.clear();
}

bool LogRateLimiter::admit(std::string_view reason) {
    auto now = clock_();
    close_window_if_over(now);
    if (!open_) {
        // Right after a window that suppressed events (the flood goes on), log nothing in full.
        bool quiet_before = !flood_until_ || now >= *flood_until_;
        open_ = true;
        window_start_ = now;
        events_ = 0;
        suppressed_ = 0;
        window_burst_ = quiet_before ? burst_ : 0;
    }
    ++events_;
    if (events_ <= window_burst_)
        return true;
    ++suppressed_;
    auto found = std::find_if(reasons_.begin(), reasons_.end(),
                              [&](const auto& entry) { return entry.first == reason; });
    if (found == reasons_.end() && reasons_.size() >= kMaxReasons)
        found = std::find_if(reasons_.begin(), reasons_.end(),
                             [](const auto& entry) { return entry.first == "other"; });
    if (found != reasons_.end())
        ++found->second;
    else if (reasons_.size() < kMaxReasons)
        reasons_.emplace_back(std::string(reason), 1);
    else
        reasons_.emplace_back("other", 1);
    return false;
}

std::optional<LogRateLimiter::Summary> LogRateLimiter::take_summary() {
    close_window_if_over(clock_());
    return std::exchange(finished_, std::nullopt);
}

std::optional<LogRateLimiter::Summary> LogRateLimiter::flush() {
    close_window_if_over(clock_(), true);
    return std::exchange(finished_, std::nullopt);
}

std::optional<std::chrono::steady_clock::time_point> LogRateLimiter::summary_due() const {
    if (finished_)
        return std::chrono::steady_clock::time_point{}; // already due
    if (open_ && suppressed_ > 0)
        return window_start_ + interval_;
    return std::nullopt;
}

} // namespace rpmem
