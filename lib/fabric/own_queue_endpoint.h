// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "base/error.h"
#include "fabric/completion_queue.h"
#include "fabric/deadline.h"
#include "fabric/endpoint.h"
#include "fabric/tx_window.h"
#include "fabric/waiter.h"

namespace rpmem::fabric {

// A connected endpoint with a completion queue of its own, which it alone reads: one lane of a
// client (or of the bench's raw client). Writes and sends may be posted unsignalled; the
// TxWindow keeps the transmit queue from overflowing by forcing a completion now and then,
// which is swallowed here. poll(), wait() and wait_for() hand out the completions the caller
// asked for. An error completion fails the connection, and a thread blocked in a wait is woken
// by a failure of its ConnectionState.
//
// Owns its CompletionQueue; the Domain and the EventQueue must outlive it. Movable (generated;
// the destructor closes the endpoint before its queue). One thread at a time posts and waits.
class OwnQueueEndpoint : public Endpoint {
public:
    static Result<OwnQueueEndpoint> create(const Domain& domain, const fi_info& info,
                                           EventQueue& events, EndpointOptions options = {});

    OwnQueueEndpoint(OwnQueueEndpoint&&) noexcept = default;
    // The old endpoint (base, assigned first) is closed before its queue (member).
    OwnQueueEndpoint& operator=(OwnQueueEndpoint&&) noexcept = default;
    ~OwnQueueEndpoint() { close(); }

    // RMA write of source[source_offset, +length) to target[target_offset, +length).
    Result<void> write(const MemoryRegion& source, std::size_t source_offset, std::size_t length,
                       const RemoteRegion& target, std::uint64_t target_offset,
                       Signal signal = Signal::no, void* context = nullptr);
    // The same with FI_COMMIT_COMPLETE: it completes once the target has made the range
    // persistent. Always signalled. EOPNOTSUPP where the provider does not honour the flag.
    Result<void> write_commit(const MemoryRegion& source, std::size_t source_offset,
                              std::size_t length, const RemoteRegion& target,
                              std::uint64_t target_offset, void* context);
    // RMA read of source[source_offset, +length) into target[target_offset, +length).
    // Always signalled.
    Result<void> read(const MemoryRegion& target, std::size_t target_offset, std::size_t length,
                      const RemoteRegion& source, std::uint64_t source_offset, void* context);
    Result<void> send(const MemoryRegion& source, std::size_t offset, std::size_t length,
                      Signal signal, void* context);

    // poll() does not block; wait() blocks until at least one completion arrives; wait_for()
    // until the one posted with `context` arrives, keeping the others for later calls.
    Result<std::size_t> poll(std::span<Completion> out);
    Result<std::size_t> wait(std::span<Completion> out, Deadline deadline);
    Result<Completion> wait_for(void* context, Deadline deadline);

    // How wait(), wait_for() and a post waiting for room wait from now on.
    void set_wait_policy(const WaitPolicy& policy) noexcept { waiter_.set_policy(policy); }
    const TxWindow& tx_window() const noexcept { return window_; }

private:
    OwnQueueEndpoint(Endpoint endpoint, std::unique_ptr<CompletionQueue> queue,
                     const Domain& domain, const EndpointOptions& options);

    // Checks the connection and the transmit window, then posts (signalled when the caller or
    // the window wants it), letting the provider progress while it is short of room.
    Result<void> transmit(const Transmit& transmit);
    Result<void> wait_for_room(Deadline deadline);
    // Reads the queue once (blocking per the waiter until `deadline` when `block`), retiring
    // transmit entries and keeping caller-visible completions in stash_.
    Result<void> collect(bool block, Deadline deadline);
    // Reads the queue once into `out` (blocking as collect() does), retiring transmit entries
    // and dropping forced completions in place: what is left is the caller's, copied once.
    // Returns how many that is.
    Result<std::size_t> collect_into(std::span<Completion> out, bool block, Deadline deadline);
    // The context of completions the window forced: the queue's address, never a caller's.
    void* forced_context() const noexcept { return queue_.get(); }

    std::unique_ptr<CompletionQueue> queue_; // closed after the endpoint: see the destructor
    Waiter waiter_;
    TxWindow window_;
    std::chrono::milliseconds tx_timeout_;
    std::vector<Completion> stash_; // completions wait_for() read but was not after
};

} // namespace rpmem::fabric
