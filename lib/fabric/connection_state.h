// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include <rdma/fi_eq.h>

#include "base/error.h"

namespace rpmem::fabric {

// The connection state of one endpoint, shared between the endpoint (which reads it before
// every operation and while waiting) and the EventQueue it is bound to (which moves it on when
// FI_CONNECTED, FI_SHUTDOWN or an error event for the endpoint arrives, whichever thread reads
// the queue). A failure is final and the first one wins; failing signals the endpoint's
// completion queue so that a thread blocked on it wakes up and sees the failure. Thread-safe.
class ConnectionState {
public:
    enum class Phase {
        idle,       // created, neither connect nor accept called yet
        connecting, // fi_connect or fi_accept posted, FI_CONNECTED not seen yet
        connected,
        failed, // rejected, shut down, or broken: see failure()
    };

    // `wake`: the completion queue to signal on failure; null for none. It must outlive every
    // call to fail(), which the EventQueue guarantees by forgetting the endpoint before the
    // endpoint closes its queue.
    explicit ConnectionState(fid_cq* wake = nullptr) noexcept
        : wake_(wake) {}

    Phase phase() const noexcept { return phase_.load(std::memory_order_acquire); }
    bool failed() const noexcept { return phase() == Phase::failed; }

    void mark_connecting() noexcept;
    void mark_connected() noexcept;
    void fail(Error error) noexcept;

    // The failure, when failed() (an ECONNRESET placeholder should none have been recorded).
    Error failure() const;

private:
    fid_cq* const wake_;
    std::atomic<Phase> phase_{Phase::idle};
    mutable std::mutex mutex_; // guards failure_
    std::optional<Error> failure_;
};

} // namespace rpmem::fabric
