// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rpmem {

// Decides which of a stream of similar events (refused connections) get a log line of their
// own, so that a flood costs O(1) lines per interval instead of one per event.
//
// Time is cut into windows of `interval`, each beginning with the first event after the last
// window ended. In a window after a quiet one the first `burst` events are logged in full;
// the others are only counted, by reason. Once a window with counted events has ended,
// take_summary() hands out one summary of it, and while the flood goes on the next window
// logs nothing in full (burst 0): a sustained flood costs one line per interval.
//
// Pure: the clock is injected and nothing is logged here. Not thread-safe: the owner
// serializes calls (lib/channel's Server holds it under a mutex).
class LogRateLimiter {
public:
    using Now = std::function<std::chrono::steady_clock::time_point()>;

    struct Summary {
        std::size_t events = 0;     // in the window
        std::size_t suppressed = 0; // of them, not logged in full
        std::chrono::steady_clock::duration window{};
        // Suppressed events by reason, most frequent first.
        std::vector<std::pair<std::string, std::size_t>> reasons;

        // "refused 1200 connections in the last 10 s (1195 not logged one by one): 1100 no
        // TLS handshake in time, 95 TLS handshake failed" for what = "refused", things =
        // "connections".
        std::string text(std::string_view what, std::string_view things) const;
    };

    // Distinct reasons counted per window; further ones are counted as "other".
    static constexpr std::size_t kMaxReasons = 8;

    LogRateLimiter(std::size_t burst, std::chrono::steady_clock::duration interval, Now clock);

    // Records one event; true when it is to be logged in full now. `reason` is a short,
    // fixed category ("TLS handshake failed"), never client-supplied text.
    bool admit(std::string_view reason);

    // The summary of the last window once it has ended and if it suppressed anything; each
    // window's summary is handed out once.
    std::optional<Summary> take_summary();

    // Ends the current window now (the owner is stopping) and returns what take_summary()
    // would; the summary's window is then the time it actually covered.
    std::optional<Summary> flush();

    // When the current window ends, if it has something to summarize: the owner's timer.
    std::optional<std::chrono::steady_clock::time_point> summary_due() const;

private:
    void close_window_if_over(std::chrono::steady_clock::time_point now, bool force = false);

    const std::size_t burst_;
    const std::chrono::steady_clock::duration interval_;
    const Now clock_;

    bool open_ = false; // a window is running
    std::chrono::steady_clock::time_point window_start_{};
    std::size_t events_ = 0;
    std::size_t suppressed_ = 0;
    std::size_t window_burst_ = 0; // full lines allowed in this window
    std::vector<std::pair<std::string, std::size_t>> reasons_;
    std::optional<Summary> finished_; // an ended window's summary, not yet taken
    // Until when a new window still belongs to the last flood (no full lines).
    std::optional<std::chrono::steady_clock::time_point> flood_until_;
};

} // namespace rpmem
