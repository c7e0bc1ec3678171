// SPDX-License-Identifier: BSD-3-Clause
#include "client/progress_meter.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace rpmem::client {

ProgressMeter::ProgressMeter(std::string what, std::uint64_t total_bytes, Clock::duration interval,
                             Show show)
    : what_(std::move(what))
    , total_(total_bytes)
    , interval_(interval)
    , show_(std::move(show))
    , began_(Clock::now())
    , last_shown_(began_) {}

void ProgressMeter::advance(std::uint64_t bytes) {
    done_ = std::min(total_, done_ + bytes);
    const Clock::time_point now = Clock::now();
    if (now - last_shown_ < interval_)
        return;
    last_shown_ = now;
    if (show_)
        show_(*this, line(now), false);
}

void ProgressMeter::finish() {
    if (!show_)
        return;
    const double seconds = std::chrono::duration<double>(Clock::now() - began_).count();
    const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
    show_(*this,
          fmt::format("{}: {} in {:.1f} s, {}/s", what_, bytes_text(static_cast<double>(done_)),
                      seconds, bytes_text(rate)),
          true);
}

std::string ProgressMeter::line(Clock::time_point now) const {
    const double seconds = std::chrono::duration<double>(now - began_).count();
    const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
    const unsigned percent =
        total_ == 0 ? 100 : static_cast<unsigned>(done_ * 100 / std::max<std::uint64_t>(total_, 1));
    std::string text =
        fmt::format("{}: {} of {} ({}%), {}/s", what_, bytes_text(static_cast<double>(done_)),
                    bytes_text(static_cast<double>(total_)), percent, bytes_text(rate));
    if (rate > 0 && done_ < total_)
        text += fmt::format(", {:.0f} s left", static_cast<double>(total_ - done_) / rate);
    return text;
}

std::string ProgressMeter::bytes_text(double bytes) {
    constexpr std::array kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t unit = 0;
    while (bytes >= 1024 && unit + 1 < kUnits.size()) {
        bytes /= 1024;
        ++unit;
    }
    return unit == 0 ? fmt::format("{:.0f} B", bytes)
                     : fmt::format("{:.1f} {}", bytes, kUnits[unit]);
}

} // namespace rpmem::client
