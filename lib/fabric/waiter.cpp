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
    const Deadline start = Clock::now();
    const auto spin = budget_.current();
    const Deadline spin_end = spin >= deadline - start
                                  ? deadline
                                  : start + std::chrono::duration_cast<Clock::duration>(spin);
    Deadline last_pump = start;
    for (;;) {
        auto read = cq.read(out);
        if (!read || *read > 0) {
            if (policy_.adaptive && read)
                budget_.on_work(Clock::now() - start);
            return read;
        }
        if (watched != nullptr && watched->failed())
            return tl::unexpected(connection_failure(*watched));

        const Deadline now = Clock::now();
        if (events != nullptr && now - last_pump >= kPumpInterval) {
            last_pump = now;
            auto pumped = events->pump();
            if (!pumped)
                return tl::unexpected(CompletionError{nullptr, 0, std::move(pumped.error())});
            if (*pumped > 0 && watched == nullptr)
                return 0;
            continue; // look at the queue and the state again before anything else
        }
        if (now >= deadline) {
            if (policy_.adaptive)
                budget_.on_idle();
            return tl::unexpected(timeout_error());
        }
        if (now < spin_end) {
            cpu_relax();
            continue;
        }
        auto blocked = block(cq, out, events, watched, deadline);
        if (!blocked || *blocked > 0) {
            if (policy_.adaptive && blocked)
                budget_.on_work(Clock::now() - start);
            return blocked;
        }
        last_pump = Deadline(); // read the event queue at once after a block
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
