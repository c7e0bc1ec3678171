// SPDX-License-Identifier: BSD-3-Clause
// The one wait policy of both sides, on a fake clock: it spins across the regular gaps a real
// program leaves, gives up on a quiet waiter, and yields when its spinning loses the CPU to
// other threads (more spinners than cores).
#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>
#include <pthread.h>
#include <sched.h>

#include "fabric/wait_controller.h"

using rpmem::fabric::SpinMeter;
using rpmem::fabric::WaitController;
using namespace std::chrono_literals;

namespace {

// A fake clock's time point for SpinMeter.
struct FakeClock {
    using duration = std::chrono::nanoseconds;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<FakeClock>;
};

FakeClock::time_point at(std::chrono::nanoseconds t) {
    return FakeClock::time_point(t);
}

// A spin of `length` in ticks of `tick`, with one preemption of `stolen` in its middle (none
// when zero): what the waiter's loop would feed its meter.
SpinMeter spin_of(std::chrono::nanoseconds length, std::chrono::nanoseconds tick,
                  std::chrono::nanoseconds stolen = 0ns) {
    SpinMeter meter;
    std::chrono::nanoseconds now = 1s;
    meter.start(at(now));
    bool preempted = stolen == 0ns;
    while (now < 1s + length) {
        now += tick;
        if (!preempted && now >= 1s + length / 2) {
            now += stolen;
            preempted = true;
        }
        meter.tick(at(now));
    }
    return meter;
}

// A controller with `ceiling` that has learnt gaps of 100 us: it spins 125 us.
WaitController spinning_across_100us(std::chrono::nanoseconds ceiling) {
    WaitController controller(ceiling);
    for (std::size_t i = 0; i < WaitController::kWindow / 2; ++i)
        controller.on_work(100us);
    REQUIRE(controller.spin_budget() == 125us);
    return controller;
}

} // namespace

TEST_CASE("a fresh waiter blocks until it has seen the spacing of its work", "[fabric][wait]") {
    WaitController controller(1ms);
    CHECK(controller.spin_budget() == 0ns);
    CHECK(WaitController(0ns).spin_budget() == 0ns);
    CHECK(WaitController(WaitController::kForever).spin_budget() == WaitController::kForever);
}

TEST_CASE("regular gaps between persists are spun across, with room, up to the ceiling",
          "[fabric][wait]") {
    WaitController controller(1ms);
    // libpmemobj's work between the persists of a transaction: 80 to 150 us.
    for (auto gap : {80us, 95us, 120us, 150us})
        controller.on_work(gap);
    CHECK(controller.spin_budget() == 187500ns);
    // The longest of the last kWindow gaps counts: shorter ones do not lower the budget until
    // the long one is out of the window.
    for (std::size_t i = 0; i + 1 < WaitController::kWindow; ++i)
        controller.on_work(40us);
    CHECK(controller.spin_budget() == 187500ns);
    controller.on_work(40us);
    CHECK(controller.spin_budget() == 50us);
    // Never beyond the ceiling, and never below the floor.
    controller.on_work(900us);
    CHECK(controller.spin_budget() == 1ms);
    WaitController quick(1ms);
    quick.on_work(0ns); // work was already there
    CHECK(quick.spin_budget() == WaitController::kFloor);
    // A lower ceiling caps what was learnt; a higher one gives it back.
    controller.set_ceiling(100us);
    CHECK(controller.spin_budget() == 100us);
    controller.set_ceiling(2ms);
    CHECK(controller.spin_budget() == 900us + 900us / 4);
}

TEST_CASE("a quiet waiter gives up spinning and takes it up again when work comes closely",
          "[fabric][wait]") {
    WaitController controller = spinning_across_100us(500us);

    SECTION("a wait that ends without work") {
        controller.on_idle();
        CHECK(controller.spin_budget() == 0ns);
    }
    SECTION("gaps longer than the ceiling, kQuietAfter in a row") {
        controller.on_work(3ms); // one long gap (a commit between transactions) keeps it
        CHECK(controller.spin_budget() == 125us);
        controller.on_work(100us);
        controller.on_work(3ms);
        CHECK(controller.spin_budget() == 125us);
        controller.on_work(3ms);
        CHECK(controller.spin_budget() == 0ns);
    }
    // Blocked waits still measure their gaps (wake-up included): the first close one is
    // spun for again.
    controller.on_work(60us);
    CHECK(controller.spin_budget() == 75us);
}

TEST_CASE("spinning that loses the CPU to other threads backs off, longer each time",
          "[fabric][wait]") {
    WaitController controller = spinning_across_100us(1ms);

    // Spins with the core to themselves: a 1 us tick, no preemption. Nothing changes.
    for (int i = 0; i < 20; ++i) {
        const SpinMeter meter = spin_of(100us, 1us);
        CHECK(meter.stolen() == 0ns);
        controller.on_spin(meter.spun(), meter.stolen());
    }
    CHECK_FALSE(controller.backing_off());
    CHECK(controller.spin_budget() == 125us);

    // More spinners than cores: each spin loses 300 us of 400 to another thread.
    const SpinMeter preempted = spin_of(100us, 1us, 300us);
    CHECK(preempted.stolen() == 300us + 1us);
    CHECK(preempted.spun() == 350us);
    for (int i = 0; i < 3; ++i) {
        const SpinMeter meter = spin_of(100us, 1us, 300us);
        controller.on_spin(meter.spun(), meter.stolen());
    }
    REQUIRE(controller.backing_off());
    CHECK(controller.spin_budget() == 0ns);
    // Blocked for kBackoffWaits waits; gaps are learnt meanwhile.
    for (std::uint32_t i = 0; i < WaitController::kBackoffWaits; ++i) {
        CHECK(controller.spin_budget() == 0ns);
        controller.on_work(100us);
    }
    CHECK_FALSE(controller.backing_off());
    CHECK(controller.spin_budget() == 125us);

    // Still contended: twice as long this time.
    for (int i = 0; i < 3; ++i) {
        const SpinMeter meter = spin_of(100us, 1us, 300us);
        controller.on_spin(meter.spun(), meter.stolen());
    }
    std::uint32_t blocked = 0;
    while (controller.backing_off()) {
        controller.on_work(100us);
        ++blocked;
    }
    CHECK(blocked == 2 * WaitController::kBackoffWaits);

    // A short preemption now and then (an interrupt, a log line) is no contention.
    for (int i = 0; i < 100; ++i) {
        const SpinMeter meter = spin_of(100us, 1us, i % 10 == 0 ? 150us : 0ns);
        controller.on_spin(meter.spun(), meter.stolen());
    }
    CHECK_FALSE(controller.backing_off());
}

TEST_CASE("brief preemptions, too short to show as stolen time, are contention too",
          "[fabric][wait]") {
    // What 26x slower transactions with two replicas on two cores looked like: the program's
    // and the other daemon's bursts of work preempt a spinner for tens of microseconds each,
    // under SpinMeter's threshold, again and again.
    WaitController controller = spinning_across_100us(1ms);

    SECTION("one preemption a window is no contention; the count is asked once a window") {
        int asked = 0;
        for (int window = 0; window < 5; ++window)
            for (int i = 0; i < 10; ++i) {
                const SpinMeter meter = spin_of(100us, 1us);
                controller.on_spin(meter.spun(), meter.stolen(), [&] {
                    ++asked;
                    return 1u;
                });
            }
        CHECK(asked == 5); // 10 spins of 100 us make a window
        CHECK_FALSE(controller.backing_off());
        CHECK(controller.spin_budget() == 125us);
    }
    SECTION("kContendedPreemptions within one window of spinning back off") {
        for (int i = 0; i < 10 && !controller.backing_off(); ++i) {
            const SpinMeter meter = spin_of(100us, 1us);
            CHECK(meter.stolen() == 0ns);
            controller.on_spin(meter.spun(), meter.stolen(),
                               [] { return WaitController::kContendedPreemptions; });
        }
        CHECK(controller.backing_off());
        CHECK(controller.spin_budget() == 0ns);
    }
}

TEST_CASE("Preemptions counts the calling thread's involuntary switches", "[fabric][wait]") {
    // Two threads spinning on one CPU: the kernel switches between them within its time slice
    // (a few milliseconds), so in 200 ms each is preempted; a first reading on a thread is 0.
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    std::atomic<bool> go{false};
    std::uint32_t counted[2] = {0, 0};
    std::uint32_t first[2] = {1, 1};
    auto spinner = [&](int k) {
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        rpmem::fabric::Preemptions preemptions;
        first[k] = preemptions.since_last();
        while (!go.load())
            std::this_thread::yield();
        const auto end = std::chrono::steady_clock::now() + 200ms;
        while (std::chrono::steady_clock::now() < end) {
        }
        counted[k] = preemptions.since_last();
    };
    std::thread a(spinner, 0), b(spinner, 1);
    go.store(true);
    a.join();
    b.join();
    CHECK(first[0] == 0);
    CHECK(first[1] == 0);
    CHECK(counted[0] + counted[1] > 0);
}

TEST_CASE("a spin meter counts only iterations long enough to be a preemption", "[fabric][wait]") {
    // Serving an incoming RMA write inside a poll takes tens of microseconds: no preemption.
    const SpinMeter busy = spin_of(200us, 40us);
    CHECK(busy.stolen() == 0ns);
    CHECK(busy.spun() == 200us);
    const SpinMeter descheduled = spin_of(200us, 2us, 2ms);
    CHECK(descheduled.stolen() == 2ms + 2us);
}

TEST_CASE("fixed policies do not adapt", "[fabric][wait]") {
    WaitController never(0ns);
    never.on_work(10us);
    CHECK(never.spin_budget() == 0ns);
    WaitController always(WaitController::kForever);
    always.on_idle();
    always.on_spin(1ms, 1ms);
    always.on_spin(1ms, 1ms);
    CHECK(always.spin_budget() == WaitController::kForever);
    CHECK_FALSE(always.backing_off());
}
