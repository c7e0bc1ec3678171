// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <span>

#include <rdma/fabric.h>

#include "fabric/completion_queue.h"
#include "fabric/connection_state.h"
#include "fabric/deadline.h"
#include "fabric/event_queue.h"
#include "fabric/wait_controller.h"

namespace rpmem::fabric {

// How a Waiter waits.
struct WaitPolicy {
    // The most a wait busy-polls before it blocks on the wait object; within it the
    // WaitController learns how long spinning pays. Zero blocks at once (least CPU; each
    // blocking wait costs tens of microseconds); kSpinForever never blocks (lowest latency, but
    // only when every spinning thread has a core of its own: two spinners on one core cost
    // milliseconds per operation).
    std::chrono::nanoseconds spin{std::chrono::microseconds(1000)};
    // The longest single block, so that connection events are looked at this often even where
    // the provider's wait object does not report them.
    std::chrono::milliseconds slice{50};

    static constexpr std::chrono::nanoseconds kSpinForever = WaitController::kForever;
};

// Waits for completions: polls the completion queue for the spin budget its WaitController
// gives (learnt from the last waits), then blocks on its wait object (fi_trywait + poll() on
// the descriptors of the CQ and of the event queue, or fi_cq_sread where the provider has no
// descriptor), in slices, until completions arrive, an operation fails, the watched connection
// fails (its ConnectionState, which any thread's pump of the event queue moves on), or the
// deadline passes. Every wait ends by its deadline. Meant to be owned by the one thread that
// waits with it; holds no libfabric object, only the fabric's pointer for fi_trywait (the
// Fabric must outlive it).
class Waiter {
public:
    explicit Waiter(fid_fabric* fabric, WaitPolicy policy = {}) noexcept
        : fabric_(fabric)
        , policy_(policy)
        , controller_(policy.spin) {}

    // Returns the number of completions read into `out` (at least one), or 0 when `watched`
    // is null and events were read from `events` (a responder then looks at the connection
    // states of its endpoints). Errors: the failed operation's CompletionError; the failure
    // of `watched` (ECONNRESET when the peer shut down or died); ETIMEDOUT at the deadline.
    CompletionResult wait(CompletionQueue& cq, std::span<Completion> out, EventQueue* events,
                          const ConnectionState* watched, Deadline deadline);

    const WaitPolicy& policy() const noexcept { return policy_; }
    void set_policy(const WaitPolicy& policy) noexcept {
        policy_ = policy;
        controller_.set_ceiling(policy.spin);
    }
    // What the next wait spins before it blocks.
    std::chrono::nanoseconds spin_budget() const noexcept { return controller_.spin_budget(); }

private:
    // One block of at most policy_.slice: returns completions read by fi_cq_sread, or 0.
    CompletionResult block(CompletionQueue& cq, std::span<Completion> out, EventQueue* events,
                           const ConnectionState* watched, Deadline deadline);

    fid_fabric* fabric_;
    WaitPolicy policy_;
    WaitController controller_;
    Preemptions preemptions_;
    bool trywait_works_ = true;
};

} // namespace rpmem::fabric
