// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include "base/log_rate_limiter.h"

using namespace std::chrono_literals;
using rpmem::LogRateLimiter;
using Clock = std::chrono::steady_clock;

namespace {

struct FakeClock {
    Clock::time_point now = Clock::time_point{} + 1000s;
    LogRateLimiter::Now function() {
        return [this] { return now; };
    }
};

} // namespace

TEST_CASE("the first events of a window are logged, the rest counted") {
    FakeClock clock;
    LogRateLimiter limiter(3, 10s, clock.function());
    int logged = 0;
    for (int i = 0; i < 1000; ++i)
        logged += limiter.admit(i % 4 == 0 ? "TLS handshake failed" : "no TLS handshake in time");
    CHECK(logged == 3);
    CHECK_FALSE(limiter.take_summary()); // the window has not ended
    REQUIRE(limiter.summary_due());
    CHECK(*limiter.summary_due() == clock.now + 10s);

    clock.now += 10s;
    auto summary = limiter.take_summary();
    REQUIRE(summary);
    CHECK(summary->events == 1000);
    CHECK(summary->suppressed == 997);
    REQUIRE(summary->reasons.size() == 2);
    // The first three (logged) were one handshake failure and two timeouts.
    CHECK(summary->reasons[0] ==
          std::pair<std::string, std::size_t>{"no TLS handshake in time", 748});
    CHECK(summary->reasons[1].second == 249);
    CHECK(summary->text("refused", "connections") ==
          "refused 1000 connections in the last 10 s (997 not logged one by one): 748 no TLS "
          "handshake in time, 249 TLS handshake failed");
    CHECK_FALSE(limiter.take_summary()); // handed out once
    CHECK_FALSE(limiter.summary_due());
}

TEST_CASE("a window without suppressed events has no summary") {
    FakeClock clock;
    LogRateLimiter limiter(5, 10s, clock.function());
    CHECK(limiter.admit("a"));
    CHECK(limiter.admit("a"));
    CHECK_FALSE(limiter.summary_due());
    clock.now += 11s;
    CHECK_FALSE(limiter.take_summary());
    CHECK(limiter.admit("a")); // a new window, full burst again
}

TEST_CASE("a sustained flood costs one summary per interval and no full lines") {
    FakeClock clock;
    LogRateLimiter limiter(5, 10s, clock.function());
    int logged = 0;
    int summaries = 0;
    for (int second = 0; second < 60; ++second) {
        for (int i = 0; i < 100; ++i)
            logged += limiter.admit("no TLS handshake in time");
        clock.now += 1s;
        summaries += limiter.take_summary().has_value();
    }
    CHECK(logged == 5);
    CHECK(summaries == 6);
}

TEST_CASE("after a quiet interval the burst is logged in full again") {
    FakeClock clock;
    LogRateLimiter limiter(2, 10s, clock.function());
    for (int i = 0; i < 10; ++i)
        limiter.admit("a");
    clock.now += 10s;
    REQUIRE(limiter.take_summary());
    clock.now += 10s; // a whole interval without events
    CHECK(limiter.admit("a"));
    CHECK(limiter.admit("a"));
    CHECK_FALSE(limiter.admit("a"));
}

TEST_CASE("an untaken summary is folded into the next, not lost") {
    FakeClock clock;
    LogRateLimiter limiter(1, 10s, clock.function());
    limiter.admit("a");
    limiter.admit("a"); // suppressed
    clock.now += 10s;
    limiter.admit("b"); // closes the first window, opens a second (suppressed: flood)
    clock.now += 10s;
    auto summary = limiter.take_summary();
    REQUIRE(summary);
    CHECK(summary->events == 3);
    CHECK(summary->suppressed == 2);
    CHECK(summary->window == 20s);
}

TEST_CASE("distinct reasons are bounded") {
    FakeClock clock;
    LogRateLimiter limiter(0, 10s, clock.function());
    for (int i = 0; i < 100; ++i)
        limiter.admit("reason " + std::to_string(i));
    clock.now += 10s;
    auto summary = limiter.take_summary();
    REQUIRE(summary);
    CHECK(summary->suppressed == 100);
    CHECK(summary->reasons.size() <= LogRateLimiter::kMaxReasons + 1);
    CHECK(summary->reasons[0] == std::pair<std::string, std::size_t>{"other", 92});
}

TEST_CASE("flush ends the window early, for a last summary") {
    FakeClock clock;
    LogRateLimiter limiter(1, 10s, clock.function());
    limiter.admit("a");
    limiter.admit("a");
    clock.now += 3s;
    CHECK_FALSE(limiter.take_summary());
    auto summary = limiter.flush();
    REQUIRE(summary);
    CHECK(summary->suppressed == 1);
    CHECK(summary->window == 3s);
    CHECK_FALSE(limiter.flush());
}
