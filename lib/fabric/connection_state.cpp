// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/connection_state.h"

#include <cerrno>

namespace rpmem::fabric {

void ConnectionState::mark_connecting() noexcept {
    Phase expected = Phase::idle;
    phase_.compare_exchange_strong(expected, Phase::connecting, std::memory_order_acq_rel);
}

void ConnectionState::mark_connected() noexcept {
    Phase expected = Phase::connecting;
    phase_.compare_exchange_strong(expected, Phase::connected, std::memory_order_acq_rel);
}

void ConnectionState::fail(Error error) noexcept {
    {
        const std::lock_guard lock(mutex_);
        if (phase_.load(std::memory_order_acquire) == Phase::failed)
            return;
        failure_.emplace(std::move(error));
        phase_.store(Phase::failed, std::memory_order_release);
    }
    if (wake_ != nullptr)
        fi_cq_signal(wake_);
}

Error ConnectionState::failure() const {
    const std::lock_guard lock(mutex_);
    if (failure_)
        return *failure_;
    return Error(ECONNRESET, "connection failed", ErrorSource::fabric, ECONNRESET);
}

} // namespace rpmem::fabric
