// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <rdma/fi_eq.h>

#include "base/error.h"
#include "fabric/connection_state.h"
#include "fabric/deadline.h"
#include "fabric/fabric.h"
#include "fabric/fid_ptr.h"
#include "fabric/info.h"

namespace rpmem::fabric {

// An incoming connection as a passive endpoint reports it: the fi_info to open the endpoint
// from (or to reject with), the opaque private data the connector sent, and who it is.
struct ConnectionRequest {
    InfoPtr info;
    std::vector<std::byte> private_data;
    std::string peer; // "10.0.0.2:41234"
};

// Owner of an event queue (fi_eq) and the dispatcher of its events: connection events of the
// endpoints bound to it go to their ConnectionState (FI_CONNECTED -> connected; FI_SHUTDOWN ->
// failed with ECONNRESET; an error entry -> failed with its reason, ECONNREFUSED for a
// rejection), and connection requests of a passive endpoint are kept until taken. Any thread
// may pump it, several at once (an endpoint's waiter does so while it waits, so that a peer's
// death is noticed by whoever is waiting). Its Fabric must outlive it; every endpoint and
// passive endpoint bound to it must be closed first, which is why it does not move (they keep
// its address); open() hands it out in a unique_ptr. Thread-safe.
class EventQueue {
public:
    static Result<std::unique_ptr<EventQueue>> open(const Fabric& fabric, std::size_t size = 256);

    EventQueue(const EventQueue&) = delete;
    EventQueue& operator=(const EventQueue&) = delete;
    ~EventQueue() = default;

    // Reads every event available and dispatches it, first blocking up to `block` for one.
    // Returns how many were read. Errors are those of the queue itself, not of a connection.
    Result<std::size_t> pump(std::chrono::milliseconds block = std::chrono::milliseconds(0));

    // The oldest connection request not taken yet, reading the queue until `deadline`.
    // ETIMEDOUT when none came; the passive endpoint's own error events fail it too.
    Result<ConnectionRequest>
    wait_request(Deadline deadline,
                 std::chrono::milliseconds slice = std::chrono::milliseconds(100));
    std::optional<ConnectionRequest> take_request();

    // Route events of `endpoint` to `state` until forget(endpoint). The endpoint calls forget
    // before it closes; no call into the state happens after forget returns.
    void watch(fid_t endpoint, std::shared_ptr<ConnectionState> state);
    void forget(fid_t endpoint);

    // A descriptor that poll() reports readable while events wait, or -1 when the provider
    // has none (then pump(block) is the way to block).
    int wait_fd() const noexcept { return wait_fd_; }
    fid_eq* get() const noexcept { return eq_.get(); }
    fid_fabric* fabric() const noexcept { return fabric_; }

private:
    EventQueue(fid_fabric* fabric, FidPtr<fid_eq> eq, int wait_fd)
        : fabric_(fabric)
        , eq_(std::move(eq))
        , wait_fd_(wait_fd) {}

    // Reads one event (blocking up to `block_ms` when > 0) and dispatches it: 1 read, 0 empty.
    Result<int> read_one(int block_ms);
    void dispatch_error(const fi_eq_err_entry& entry);

    fid_fabric* fabric_;
    FidPtr<fid_eq> eq_;
    int wait_fd_;

    std::mutex mutex_; // guards everything below, and every call into a watched state
    std::unordered_map<fid_t, std::shared_ptr<ConnectionState>> watched_;
    std::deque<ConnectionRequest> requests_;
    std::optional<Error> listener_failure_;
};

} // namespace rpmem::fabric
