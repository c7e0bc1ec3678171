// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <rdma/fi_endpoint.h>

#include "base/error.h"
#include "fabric/capabilities.h"
#include "fabric/completion_queue.h"
#include "fabric/connection_state.h"
#include "fabric/deadline.h"
#include "fabric/domain.h"
#include "fabric/event_queue.h"
#include "fabric/fid_ptr.h"
#include "fabric/info.h"
#include "fabric/memory_region.h"
#include "fabric/tx_window.h"
#include "fabric/waiter.h"

namespace rpmem::fabric {

// Whether a transmit operation asks for a completion.
enum class Signal {
    no,
    yes,
};

struct EndpointOptions {
    WaitPolicy wait{};
    // Queue depths; 0 keeps the provider's, larger values are capped at the provider's.
    std::size_t tx_depth = 0;
    std::size_t rx_depth = 0;
    // The longest a post waits for a free transmit entry before failing with ETIMEDOUT.
    std::chrono::milliseconds tx_timeout{10'000};
    // Names the peer in messages; empty: the destination address of the fi_info.
    std::string peer;
};

// Owner of one connected (FI_EP_MSG) endpoint: one lane of a client, or one accepted
// connection of a target. Connects (client) or accepts (target) with opaque private data,
// moves data (RMA write, write with FI_COMMIT_COMPLETE, RMA read, send, receive) and reports
// completions.
//
// Completion queues. create() gives the endpoint a completion queue of its own, which the
// endpoint alone reads (poll, wait, wait_for); writes may then be posted unsignalled, the
// TxWindow keeping the transmit queue from overflowing (a forced completion is swallowed
// here). create_shared() binds a caller's queue that serves many endpoints (a responder thread
// on a target): the caller reads that queue, so every operation is posted signalled.
//
// Failure. The endpoint's ConnectionState fails when the peer shuts down or dies (FI_SHUTDOWN
// or an error event, seen by whichever thread pumps the EventQueue), or when one of its
// operations fails (an error completion: the connection is then in an unknown state, as an RC
// queue pair would be). Every later operation and wait fails with that error, ECONNRESET for a
// lost peer, and a thread blocked in wait() is woken by it.
//
// Parents: the Domain, the EventQueue and a shared CompletionQueue must outlive it. Movable.
// Thread contract: one thread at a time posts and waits (a lane belongs to its caller); the
// state may be failed from any thread.
class Endpoint {
public:
    static Result<Endpoint> create(const Domain& domain, const fi_info& info, EventQueue& events,
                                   EndpointOptions options = {});
    static Result<Endpoint> create_shared(const Domain& domain, const fi_info& info,
                                          EventQueue& events, CompletionQueue& completions,
                                          EndpointOptions options = {});

    Endpoint(Endpoint&& other) noexcept;
    Endpoint& operator=(Endpoint&& other) noexcept;
    Endpoint(const Endpoint&) = delete;
    Endpoint& operator=(const Endpoint&) = delete;
    ~Endpoint();

    // Connection setup. connect() and accept() return once the request is posted;
    // wait_connected() waits for the outcome, so that many endpoints connect in parallel: post
    // every connect, then wait for each. A rejected request fails with ECONNREFUSED.
    Result<void> connect(std::span<const std::byte> private_data = {});
    Result<void> accept(std::span<const std::byte> private_data = {});
    Result<void> wait_connected(Deadline deadline);
    // Tells the peer we are done (it sees FI_SHUTDOWN); this endpoint fails with ECONNRESET.
    Result<void> shutdown();

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
    // Posts a receive buffer; always signalled. Receives must be posted before the peer sends.
    Result<void> post_receive(const MemoryRegion& target, std::size_t offset, std::size_t length,
                              void* context);

    // Completions of the endpoint's own queue (EINVAL on a shared one). poll() does not
    // block; wait() blocks until at least one arrives; wait_for() until the one posted with
    // `context` arrives, keeping the others for later calls.
    Result<std::size_t> poll(std::span<Completion> out);
    Result<std::size_t> wait(std::span<Completion> out, Deadline deadline);
    Result<Completion> wait_for(void* context, Deadline deadline);

    // How wait(), wait_for() and a post waiting for room wait from now on.
    void set_wait_policy(const WaitPolicy& policy) noexcept { p_.waiter_.set_policy(policy); }

    const ConnectionState& state() const noexcept { return *p_.state_; }
    const std::string& peer() const noexcept { return p_.peer_; }
    const Capabilities& capabilities() const noexcept { return p_.capabilities_; }
    std::size_t tx_depth() const noexcept { return p_.window_.depth(); }
    std::size_t rx_depth() const noexcept { return p_.rx_depth_; }
    // Bytes of private data connect() and accept() can carry (FI_OPT_CM_DATA_SIZE).
    std::size_t max_private_data() const noexcept { return p_.max_private_data_; }
    const TxWindow& tx_window() const noexcept { return p_.window_; }
    CompletionQueue& completion_queue() const noexcept { return *p_.cq_; }
    fid_ep* get() const noexcept { return p_.ep_.get(); }

private:
    Endpoint() = default;

    static Result<Endpoint> make(const Domain& domain, const fi_info& info, EventQueue& events,
                                 CompletionQueue* shared, EndpointOptions options);

    // Closes the endpoint after taking it off the event queue.
    void close() noexcept;

    // Checks the connection and the transmit window, then posts with `post(flags, context)`.
    template <typename Post>
    Result<void> post_transmit(const char* operation, bool wants_completion, void* context,
                               std::uint64_t extra_flags, Post&& post);
    // An RMA write of [source_offset, +length) to target_offset, range-checked.
    Result<void> post_write(const char* operation, const MemoryRegion& source,
                            std::size_t source_offset, std::size_t length,
                            const RemoteRegion& target, std::uint64_t target_offset,
                            bool wants_completion, std::uint64_t extra_flags, void* context);
    Result<void> wait_for_room(Deadline deadline);
    Result<void> usable(const char* operation);
    // The error for a post the provider refused; fails the state when the connection is gone.
    Error post_failure(int code, const char* operation);
    Error with_peer(Error error) const;

    // Reads the own queue once (blocking per the waiter until `deadline` when `block`),
    // retiring transmit entries and keeping caller-visible completions in p_.stash_.
    Result<void> collect(bool block, Deadline deadline);
    // Reads the own queue once into `out` (blocking as collect() does), retiring transmit
    // entries and dropping forced completions in place: what is left is the caller's, copied
    // once. Returns how many that is.
    Result<std::size_t> collect_into(std::span<Completion> out, bool block, Deadline deadline);
    void* flush_context() const noexcept { return p_.state_.get(); }

    // Everything an endpoint holds, in one aggregate so that a move takes it whole (and leaves
    // a default, empty one behind) instead of listing members.
    struct Parts {
        Capabilities capabilities_;
        InfoPtr info_;
        EventQueue* events_ = nullptr;
        // Declared before ep_ so that it is closed after the endpoint bound to it.
        std::unique_ptr<CompletionQueue> own_cq_;
        CompletionQueue* cq_ = nullptr;
        std::shared_ptr<ConnectionState> state_;
        FidPtr<fid_ep> ep_;
        Waiter waiter_{nullptr};
        TxWindow window_{1};
        std::size_t rx_depth_ = 0;
        std::size_t max_private_data_ = 0;
        std::chrono::milliseconds tx_timeout_{0};
        std::string peer_;
        std::vector<Completion> stash_; // completions wait_for() read but was not after
    };
    Parts p_;
};

} // namespace rpmem::fabric
