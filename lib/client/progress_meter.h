// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace rpmem::client {

// The progress of a long copy or comparison (a resync, consistency on open, rpmemctl verify):
// bytes done of a total, the rate since it began and the time left at that rate. The meter
// decides when there is something to show (at most once per interval, and once at the end);
// where the line goes is the caller's: a log line in librpmem, an updating terminal line in
// rpmemctl. Not thread-safe: one thread advances it.
class ProgressMeter {
public:
    using Clock = std::chrono::steady_clock;
    // `line`: the text to show; `final`: the last one (finish()); the meter for its figures.
    using Show =
        std::function<void(const ProgressMeter& meter, const std::string& line, bool final)>;

    ProgressMeter(std::string what, std::uint64_t total_bytes, Clock::duration interval, Show show);

    // `bytes` more are done; shows the progress when `interval` has passed since it last did.
    void advance(std::uint64_t bytes);
    // Shows the final line (the time taken and the mean rate).
    void finish();

    std::uint64_t done_bytes() const noexcept { return done_; }
    std::uint64_t total_bytes() const noexcept { return total_; }

    // "resync of host set: 12.0 MiB of 256.0 MiB (4%), 45.6 MiB/s, 5 s left".
    std::string line(Clock::time_point now) const;

    // 1536 -> "1.5 KiB"; for progress lines.
    static std::string bytes_text(double bytes);

private:
    std::string what_;
    std::uint64_t total_;
    std::uint64_t done_ = 0;
    Clock::duration interval_;
    Show show_;
    Clock::time_point began_;
    Clock::time_point last_shown_;
};

} // namespace rpmem::client
