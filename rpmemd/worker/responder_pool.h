// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>

#include "base/error.h"
#include "base/unique_fd.h"
#include "rpmemd/worker/lane_gate.h"

namespace rpmem::daemon {

// What a responder thread serves: the fabric half of one session (FabricTarget). Called only
// by the thread it is attached to, never two calls at once.
class Responsive {
public:
    virtual ~Responsive() = default;

    // Reads what is ready and handles it, without blocking; returns how much work that was
    // (completions and events). `events_ready`: its wait descriptors were reported readable,
    // or it has not looked at its connection events for a while: look now.
    virtual std::size_t poll(bool events_ready) = 0;

    enum class Arm {
        ready,   // something is ready already: do not block
        armed,   // its descriptors were appended: block on them
        no_wait, // the provider has no descriptor to block on: poll it again soon
    };
    // Before the thread blocks: makes blocking safe (fi_trywait) and appends the descriptors
    // whose readability means work for it.
    virtual Arm arm(std::vector<pollfd>& fds) = 0;

    // Only for a thread that serves nothing but this one, whose provider has no descriptor:
    // blocks in the provider (fi_cq_sread) up to `timeout` and handles what came.
    virtual std::size_t block(std::chrono::milliseconds timeout) = 0;

    // For log lines ("session 7").
    virtual const std::string& name() const noexcept = 0;
};

// How the responder threads of one process wait.
struct ResponderOptions {
    // Threads at most; each serves the sessions attached to it (the least loaded gets the next
    // one), so there are min(threads, sessions) of them at any time. At least 1.
    unsigned threads = 1;
    // The most a thread busy-polls for work before it blocks on the descriptors of its
    // sessions; fabric::WaitController learns how long below that. nanoseconds::max(): never
    // block (only for a thread with a core of its own).
    std::chrono::nanoseconds spin = std::chrono::microseconds(1000);
    int cpu = -1; // pin every thread to this CPU; -1: none
    // The longest block: connection events are looked at this often at least, and a provider
    // without descriptors (no_wait) is polled every millisecond.
    std::chrono::milliseconds slice{50};
};

// The bounded set of responder threads of one worker process (rpmemd's `nthreads`): instead
// of a thread per session, a few threads each poll the sessions attached to them in turn, spin
// while completions keep coming and otherwise block in poll(2) on all their sessions' wait
// descriptors at once. A thread starts with its first session and ends with its last.
// attach() and detach() are thread-safe; detach() returns once no thread touches the session.
class ResponderPool {
public:
    explicit ResponderPool(ResponderOptions options);
    ~ResponderPool(); // every session must be detached first
    ResponderPool(const ResponderPool&) = delete;
    ResponderPool& operator=(const ResponderPool&) = delete;

    // Serves `session` from now on, until detach(); errors when no thread could be started.
    Result<void> attach(Responsive& session);
    // Stops serving it; after the return no responder thread calls into it any more.
    void detach(Responsive& session) noexcept;

    // Threads running now, and sessions attached (for logs, metrics and tests).
    unsigned threads() const;
    std::size_t sessions() const;

    const ResponderOptions& options() const noexcept { return options_; }
    // The doorkeeper of the data ports of the sessions served here (it sweeps on its own thread).
    LaneGate& lane_gate() noexcept { return lane_gate_; }

private:
    class Responder;

    ResponderOptions options_;
    LaneGate lane_gate_;
    mutable std::mutex mutex_; // guards responders_
    std::vector<std::unique_ptr<Responder>> responders_;
};

} // namespace rpmem::daemon
