// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/waiter.h"

#include <cerrno>

#include <poll.h>
#include <rdma/fi_errno.h>

namespace rpmem::fabric {

namespace {

// While spinning, the event queue is read this often: connection events are rare, and on
// providers whose EQ read also drives connection management it is not free.
constexpr auto kPumpInterval = std::chrono::milliseconds(1);

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

CompletionError timeout_error() {
    return CompletionError{
        nullptr, 0,
        Error(ETIMEDOUT, "no completion before the deadline", ErrorSource::fabric, FI_ETIMEDOUT)};
}

CompletionError connection_failure(const ConnectionState& state) {
    return CompletionError{nullptr, 0, state.failure()};
}

} // namespace

CompletionResult Waiter::wait(CompletionQueue& cq, std::span<Completion> out, EventQueue* events,
                              const ConnectionState* watched, Deadline deadline) {
    // Work already there costs no clock read.
    auto first = cq.read(out);
    if (!first || *first > 0) {
        if (first)
            controller_.on_work(std::chrono::nanoseconds::zero());
        return first;
    }
    const Deadline start = Clock::now();
    const auto spin = controller_.spin_budget();
    const Deadline spin_end = spin >= deadline - start
                                  ? deadline
                                  : start + std::chrono::duration_cast<Clock::duration>(spin);
    SpinMeter meter;
    meter.start(start);
    bool spun = spin > std::chrono::nanoseconds::zero();
    const auto end_spin = [&] {
        if (spun)
            controller_.on_spin(meter.spun(), meter.stolen(),
                                [this] { return preemptions_.since_last(); });
        spun = false;
    };
    Deadline last_pump = start;
    Deadline now = start;
    for (;;) {
        if (watched != nullptr && watched->failed()) {
            end_spin();
            return tl::unexpected(connection_failure(*watched));
        }
        now = Clock::now();
        if (spun)
            meter.tick(now);
        if (events != nullptr && now - last_pump >= kPumpInterval) {
            last_pump = now;
            auto pumped = events->pump();
            if (!pumped) {
                end_spin();
                return tl::unexpected(CompletionError{nullptr, 0, std::move(pumped.error())});
            }
            if (*pumped > 0 && watched == nullptr) {
                end_spin();
                return 0;
            }
        } else if (now >= deadline) {
            end_spin();
            controller_.on_idle();
            return tl::unexpected(timeout_error());
        } else if (now < spin_end) {
            cpu_relax();
        } else {
            end_spin();
            auto blocked = block(cq, out, events, watched, deadline);
            if (!blocked || *blocked > 0) {
                if (blocked)
                    controller_.on_work(Clock::now() - start);
                return blocked;
            }
            last_pump = Deadline(); // read the event queue at once after a block
        }
        auto read = cq.read(out);
        if (!read || *read > 0) {
            end_spin();
            if (read)
                controller_.on_work(now - start); // the clock read of this turn is close enough
            return read;
        }
    }
}

CompletionResult Waiter::block(CompletionQueue& cq, std::span<Completion> out, EventQueue* events,
                               const ConnectionState* watched, Deadline deadline) {
    const int timeout_ms = milliseconds_until(deadline, policy_.slice);
    if (timeout_ms == 0)
        return 0;
    if (cq.wait_fd() < 0 || !trywait_works_)
        return cq.read_blocking(out, std::chrono::milliseconds(timeout_ms));

    const bool with_events = events != nullptr && events->wait_fd() >= 0;
    fid* fids[2] = {&cq.get()->fid, with_events ? &events->get()->fid : nullptr};
    const int ret = fi_trywait(fabric_, fids, with_events ? 2 : 1);
    if (ret == -FI_EAGAIN)
        return 0; // something is ready: read it rather than block
    if (ret != 0) {
        trywait_works_ = false; // the provider cannot tell when blocking is safe
        return cq.read_blocking(out, std::chrono::milliseconds(timeout_ms));
    }
    // A failure recorded between our last look and fi_trywait signalled the queue before
    // fi_trywait reset it: look once more, after which a failure's signal wakes poll().
    if (watched != nullptr && watched->failed())
        return tl::unexpected(connection_failure(*watched));

    pollfd fds[2] = {{cq.wait_fd(), POLLIN, 0}, {with_events ? events->wait_fd() : -1, POLLIN, 0}};
    if (poll(fds, with_events ? 2 : 1, timeout_ms) < 0 && errno != EINTR)
        return tl::unexpected(CompletionError{nullptr, 0, Error::from_errno(errno, "poll")});
    return 0;
}

} // namespace rpmem::fabric
