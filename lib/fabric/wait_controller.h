// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace rpmem::fabric {

// How long a waiting thread busy-polls before it blocks: the one wait policy of both sides (an
// initiator lane waiting for its replies, a responder thread waiting for its sessions'
// requests). Spinning pays when work comes within the spin: it saves the wake-up of a blocking
// wait (about 45 us here). It costs the CPU it burns, which on a small machine may be the very
// core the peer needs to produce that work. So the controller:
//  - learns the spacing of the work: the budget covers the longest of the last kWindow gaps,
//    with room (x 1.25), never beyond the ceiling. A real program (libpmemobj logging and
//    allocating between the persists of a transaction) leaves gaps of 50 to 200 us; they are
//    spun across, not slept through;
//  - gives up on a quiet waiter: a wait that ends without work, or kQuietAfter gaps in a row
//    longer than the ceiling, drop the budget to zero (block at once, no CPU) until gaps within
//    the ceiling come again;
//  - yields when the machine has no idle core: the spin loop reports how much of its time the
//    thread did not run (SpinMeter, from the clock reads it does anyway) and how often the
//    kernel took its core for another thread (Preemptions). A thread woken while a core is idle
//    goes there; it preempts a spinner only when none is. So when more than a fifth of the
//    spinning went to other threads, or the spinner was preempted kContendedPreemptions times
//    within kShareWindow of spinning (short preemptions, each too brief to show as stolen time:
//    the peer's or the program's bursts of work), more threads want the cores than there are:
//    the waiter blocks for kBackoffWaits waits, doubled each time that repeats (up to
//    kMaxBackoffWaits), then tries a spin again. Spinners that outnumber the cores thus stop
//    starving each other (and the peer that produces their work) within a millisecond of
//    spinning.
// A ceiling of zero never spins; kForever always spins (no adaptation: for benchmarks with a
// core per spinner). Pure arithmetic, no clock of its own; owned by the one waiting thread.
class WaitController {
public:
    static constexpr std::chrono::nanoseconds kForever = std::chrono::nanoseconds::max();
    static constexpr std::size_t kWindow = 16;
    static constexpr unsigned kQuietAfter = 2;
    // Spinning looked at in windows of at least this much spin time.
    static constexpr std::chrono::nanoseconds kShareWindow = std::chrono::milliseconds(1);
    static constexpr std::uint32_t kContendedPreemptions = 2;
    static constexpr std::uint32_t kBackoffWaits = 64;
    static constexpr std::uint32_t kMaxBackoffWaits = 8192;
    // Below this a spin catches nothing a blocking wait would not catch as fast.
    static constexpr std::chrono::nanoseconds kFloor{2000};

    explicit WaitController(std::chrono::nanoseconds ceiling) noexcept
        : ceiling_(ceiling < std::chrono::nanoseconds::zero() ? std::chrono::nanoseconds::zero()
                                                              : ceiling) {}

    // How long the next wait spins before it blocks.
    std::chrono::nanoseconds spin_budget() const noexcept;
    std::chrono::nanoseconds ceiling() const noexcept { return ceiling_; }
    bool spins_forever() const noexcept { return ceiling_ == kForever; }
    // Blocking for a while because spinning lost the CPU to others.
    bool backing_off() const noexcept { return backoff_left_ > 0; }

    // A new ceiling; what was learnt of the gaps is kept (the budget never exceeds it).
    void set_ceiling(std::chrono::nanoseconds ceiling) noexcept;

    // A wait ended with work `gap` after it began (spinning, or blocked and woken).
    void on_work(std::chrono::nanoseconds gap) noexcept;
    // A wait ended without work (its slice or deadline passed): the waiter is quiet.
    void on_idle() noexcept;
    // A spin just ended: it lasted `spun` (wall time), of which `stolen` the thread was not
    // running (SpinMeter). Once kShareWindow of spinning has gathered, the controller judges
    // it, asking `count_preemptions()` (Preemptions::since_last: a system call, so once a
    // window, not once a spin) how often the kernel preempted the thread meanwhile.
    template <typename CountPreemptions>
    void on_spin(std::chrono::nanoseconds spun, std::chrono::nanoseconds stolen,
                 CountPreemptions&& count_preemptions) noexcept {
        if (spins_forever() || !gather_spin(spun, stolen))
            return;
        judge_window(static_cast<std::uint32_t>(count_preemptions()));
    }
    void on_spin(std::chrono::nanoseconds spun, std::chrono::nanoseconds stolen) noexcept {
        on_spin(spun, stolen, [] { return 0u; });
    }

private:
    void count_wait() noexcept;
    // Adds a spin to the window; true once the window holds kShareWindow of spinning.
    bool gather_spin(std::chrono::nanoseconds spun, std::chrono::nanoseconds stolen) noexcept;
    void judge_window(std::uint32_t preemptions) noexcept;
    void forget_gaps() noexcept;

    std::chrono::nanoseconds ceiling_;
    std::array<std::int64_t, kWindow> gaps_{}; // ns; the last kWindow gaps within the ceiling
    std::size_t gap_count_ = 0;                // how many of gaps_ hold one (up to kWindow)
    std::size_t next_gap_ = 0;
    unsigned long_gaps_ = 0; // in a row, longer than the ceiling
    std::int64_t spun_ns_ = 0;
    std::int64_t stolen_ns_ = 0;
    std::uint32_t backoff_ = kBackoffWaits; // the next backoff's length
    std::uint32_t backoff_left_ = 0;
};

// Measures, inside a spin loop, the time the spinning thread did not run. The loop reads the
// clock once an iteration anyway; an iteration that took longer than kPreempted (an empty
// completion-queue poll takes a microsecond or two, serving an incoming RMA write some tens)
// means the thread was preempted for that long: its core went to another thread.
class SpinMeter {
public:
    static constexpr std::chrono::nanoseconds kPreempted = std::chrono::microseconds(100);

    template <typename TimePoint>
    void start(TimePoint now) noexcept {
        started_ = last_ = now.time_since_epoch();
        stolen_ = {};
    }
    template <typename TimePoint>
    void tick(TimePoint now) noexcept {
        const auto at = now.time_since_epoch();
        if (at - last_ > kPreempted)
            stolen_ += std::chrono::duration_cast<std::chrono::nanoseconds>(at - last_);
        last_ = at;
    }
    std::chrono::nanoseconds spun() const noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(last_ - started_);
    }
    std::chrono::nanoseconds stolen() const noexcept { return stolen_; }

private:
    std::chrono::nanoseconds started_{};
    std::chrono::nanoseconds last_{};
    std::chrono::nanoseconds stolen_{};
};

// The calling thread's involuntary context switches (getrusage RUSAGE_THREAD): how often the
// kernel gave its core to another thread. One system call a read, taken once a spin. A lane's
// waiter may serve one thread, then another: a reading on another thread than the last starts
// over (0).
class Preemptions {
public:
    // Switches of the calling thread since the last call.
    std::uint32_t since_last() noexcept;

private:
    long last_ = 0;
    std::thread::id reader_;
};

} // namespace rpmem::fabric
