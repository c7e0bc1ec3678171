// SPDX-License-Identifier: BSD-3-Clause
#include <chrono>

#include <catch2/catch.hpp>

#include "persist/adaptive_spin.h"

using rpmem::persist::AdaptiveSpin;
using namespace std::chrono_literals;

namespace {

// Runs `n` waits that each took `waited`, with the budget the policy gave them.
void wait_n(AdaptiveSpin& spin, int n, std::chrono::nanoseconds waited) {
    for (int i = 0; i < n; ++i)
        spin.record(waited, spin.budget());
}

} // namespace

TEST_CASE("quick replies keep the lane spinning up to the ceiling") {
    AdaptiveSpin spin(50us);
    wait_n(spin, 100, 20us);
    CHECK(spin.spinning());
    CHECK(spin.budget() == 50us);
}

TEST_CASE("a run of slow replies stops the spinning; one slow reply does not") {
    AdaptiveSpin spin(50us);
    wait_n(spin, 20, 20us);
    spin.record(200us, spin.budget()); // one outlier
    CHECK(spin.spinning());
    wait_n(spin, 20, 500us);
    CHECK_FALSE(spin.spinning());
    CHECK(spin.budget() == 0us);
}

TEST_CASE("while blocking, a probe spins now and then, and a quick probe resumes spinning") {
    AdaptiveSpin spin(50us);
    wait_n(spin, 40, 500us);
    REQUIRE_FALSE(spin.spinning());
    int probes = 0;
    for (std::uint32_t i = 0; i < 2 * AdaptiveSpin::kProbeEvery; ++i) {
        const auto budget = spin.budget();
        if (budget > 0us)
            ++probes;
        spin.record(500us, budget); // still slow: blocking waits and slow probes
    }
    CHECK(probes == 2);
    CHECK_FALSE(spin.spinning());
    while (spin.budget() == 0us)
        spin.record(30us, 0us); // blocking waits do not count, however quick they look
    CHECK_FALSE(spin.spinning());
    spin.record(10us, spin.budget()); // the probe
    CHECK(spin.spinning());
}

TEST_CASE("no ceiling never spins; spinning forever is not adapted") {
    AdaptiveSpin never(0us);
    wait_n(never, 10, 1us);
    CHECK(never.budget() == 0us);
    AdaptiveSpin always(AdaptiveSpin::kForever);
    wait_n(always, 100, 1s);
    CHECK(always.budget() == AdaptiveSpin::kForever);
}
