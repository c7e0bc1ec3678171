// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include "base/error.h"
#include "fabric/capabilities.h"
#include "fabric/completion_queue.h"
#include "fabric/connection_state.h"
#include "fabric/deadline.h"
#include "fabric/domain.h"
#include "fabric/event_queue.h"
#include "fabric/info.h"
#include "fabric/memory_region.h"
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

// Deleter of an endpoint's fid: takes it off the event queue, then closes it.
struct EndpointCloser {
    EventQueue* events = nullptr;
    void operator()(fid_ep* endpoint) const noexcept;
};

// What both kinds of connected (FI_EP_MSG) endpoint share: the fid bound to the event queue and
// to a completion queue, connection setup (connect or accept with opaque private data), receives,
// and the validated building and posting of transmit operations (RMA write, write with
// FI_COMMIT_COMPLETE, RMA read, send). Not used alone: OwnQueueEndpoint (own_queue_endpoint.h,
// a client lane reading its own completion queue) and SharedQueueEndpoint
// (shared_queue_endpoint.h, a target connection whose completions the shared queue's owner
// reads) add the completion side of their mode.
//
// Failure. The ConnectionState fails when the peer shuts down or dies (FI_SHUTDOWN or an error
// event, seen by whichever thread pumps the EventQueue), or when one of the endpoint's
// operations fails (an error completion: the connection is then in an unknown state, as an RC
// queue pair would be). Every later operation fails with that error, ECONNRESET for a lost peer.
//
// Parents: the Domain, the EventQueue and the CompletionQueue must outlive the fid. Moves are
// generated: the fid is taken off the event queue and closed by its EndpointCloser.
// Thread contract: one thread at a time posts (a lane belongs to its caller); the state may be
// failed from any thread.
class Endpoint {
public:
    // Public for Result<Endpoint>; only the two modes make one (open() is theirs).
    Endpoint(Endpoint&&) noexcept = default;
    Endpoint& operator=(Endpoint&&) noexcept = default;
    ~Endpoint() = default;

    // Connection setup. connect() and accept() return once the request is posted;
    // wait_connected() waits for the outcome, so that many endpoints connect in parallel: post
    // every connect, then wait for each. A rejected request fails with ECONNREFUSED.
    Result<void> connect(std::span<const std::byte> private_data = {});
    Result<void> accept(std::span<const std::byte> private_data = {});
    Result<void> wait_connected(Deadline deadline);
    // Tells the peer we are done (it sees FI_SHUTDOWN); this endpoint fails with ECONNRESET.
    Result<void> shutdown();

    // Posts a receive buffer; always signalled. Receives must be posted before the peer sends.
    Result<void> post_receive(const MemoryRegion& target, std::size_t offset, std::size_t length,
                              void* context);

    const ConnectionState& state() const noexcept { return *state_; }
    const std::string& peer() const noexcept { return peer_; }
    const Capabilities& capabilities() const noexcept { return capabilities_; }
    std::size_t tx_depth() const noexcept { return tx_depth_; }
    std::size_t rx_depth() const noexcept { return rx_depth_; }
    // Bytes of private data connect() and accept() can carry (FI_OPT_CM_DATA_SIZE).
    std::size_t max_private_data() const noexcept { return max_private_data_; }
    CompletionQueue& completion_queue() const noexcept { return *cq_; }
    fid_ep* get() const noexcept { return ep_.get(); }

protected:
    struct QueueDepths {
        std::size_t tx = 0;
        std::size_t rx = 0;
    };
    // The depths an endpoint opened with `options` on `info` gets (capped at the provider's).
    static QueueDepths queue_depths(const fi_info& info, const EndpointOptions& options);
    // Opens, binds to `events` and `completions` and enables the endpoint.
    static Result<Endpoint> open(const Domain& domain, const fi_info& info, EventQueue& events,
                                 CompletionQueue& completions, const EndpointOptions& options);
    // Adds "fabric connection with PEER" to an error found before open() could.
    static Error with_peer(Error error, const fi_info& info, const EndpointOptions& options);

    // One validated transmit operation, ready to post with the flags and context its mode
    // chooses.
    struct Transmit {
        enum class Kind {
            write,
            read,
            send,
        };
        Kind kind = Kind::send;
        const char* operation = "";
        iovec local{};
        void* descriptor = nullptr;
        fi_rma_iov remote{};
        std::uint64_t extra_flags = 0;
        bool wants_completion = true;
        void* context = nullptr;
    };
    // Range- and size-checked descriptions of the four transmit operations.
    Result<Transmit> rma_write(const MemoryRegion& source, std::size_t source_offset,
                               std::size_t length, const RemoteRegion& target,
                               std::uint64_t target_offset, bool wants_completion,
                               void* context) const;
    Result<Transmit> committed_write(const MemoryRegion& source, std::size_t source_offset,
                                     std::size_t length, const RemoteRegion& target,
                                     std::uint64_t target_offset, void* context) const;
    Result<Transmit> rma_read(const MemoryRegion& target, std::size_t target_offset,
                              std::size_t length, const RemoteRegion& source,
                              std::uint64_t source_offset, void* context) const;
    Result<Transmit> message(const MemoryRegion& source, std::size_t offset, std::size_t length,
                             bool wants_completion, void* context) const;

    // Whether the connection takes posts (reads the event queue once while still connecting).
    Result<void> usable(const char* operation);
    // Posts `transmit` once: 0, -FI_EAGAIN or another provider error.
    ssize_t post(const Transmit& transmit, std::uint64_t flags, void* context) noexcept;
    // The error for a post the provider refused; fails the state when the connection is gone.
    Error post_failure(int code, const char* operation);
    Error with_peer(Error error) const;

    EventQueue& events() const noexcept { return *events_; }
    ConnectionState& mutable_state() const noexcept { return *state_; }
    // Takes the endpoint off the event queue and closes it (before its own queue goes).
    void close() noexcept { ep_.reset(); }

private:
    Endpoint() = default;

    Capabilities capabilities_;
    InfoPtr info_;
    EventQueue* events_ = nullptr;
    CompletionQueue* cq_ = nullptr;
    std::shared_ptr<ConnectionState> state_;
    std::unique_ptr<fid_ep, EndpointCloser> ep_;
    std::chrono::milliseconds connect_slice_{0};
    std::size_t tx_depth_ = 0;
    std::size_t rx_depth_ = 0;
    std::size_t max_private_data_ = 0;
    std::string peer_;
};

} // namespace rpmem::fabric
