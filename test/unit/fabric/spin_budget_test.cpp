// SPDX-License-Identifier: BSD-3-Clause
#include <chrono>

#include <catch2/catch.hpp>

#include "fabric/spin_budget.h"

using rpmem::fabric::SpinBudget;
using namespace std::chrono_literals;

TEST_CASE("a fresh budget spins up to its ceiling", "[fabric][spin]") {
    SpinBudget budget(50us);
    CHECK(budget.current() == 50us);
    CHECK(SpinBudget(0us).current() == 0us);
}

TEST_CASE("work later than the ceiling halves the budget down to zero", "[fabric][spin]") {
    SpinBudget budget(40us);
    budget.on_work(100us);
    CHECK(budget.current() == 20us);
    budget.on_idle();
    CHECK(budget.current() == 10us);
    for (int i = 0; i < 4; ++i)
        budget.on_work(1ms);
    CHECK(budget.current() == 0us); // 10 -> 5 -> 2.5 -> 1.25 -> 0.625, below the floor
}

TEST_CASE("work within the ceiling raises the budget to cover its gap", "[fabric][spin]") {
    SpinBudget budget(40us);
    for (int i = 0; i < 10; ++i)
        budget.on_idle();
    REQUIRE(budget.current() == 0us);
    // Work that came 10 us into a blocking wait: spinning 15 us would have caught it.
    budget.on_work(10us);
    CHECK(budget.current() == 15us);
    // A shorter gap does not lower it, a longer one raises it, up to the ceiling only.
    budget.on_work(2us);
    CHECK(budget.current() == 15us);
    budget.on_work(20us);
    CHECK(budget.current() == 30us);
    budget.on_work(39us);
    CHECK(budget.current() == 40us);
    // Instant work still leaves at least the floor to spin.
    SpinBudget fresh(40us);
    for (int i = 0; i < 10; ++i)
        fresh.on_idle();
    fresh.on_work(0us);
    CHECK(fresh.current() == SpinBudget::kFloor);
}

TEST_CASE("a zero ceiling never spins, an unbounded one always does", "[fabric][spin]") {
    SpinBudget never(0us);
    never.on_work(0us);
    CHECK(never.current() == 0us);
    SpinBudget always(std::chrono::nanoseconds::max());
    always.on_work(1s);
    always.on_idle();
    CHECK(always.spins_forever());
    CHECK(always.current() == std::chrono::nanoseconds::max());
}
