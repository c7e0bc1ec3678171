// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>

#include "base/error.h"
#include "fabric/deadline.h"
#include "fabric/event_queue.h"
#include "fabric/fabric.h"
#include "fabric/fid_ptr.h"
#include "fabric/port_sockets.h"

namespace rpmem::fabric {

// Owner of a listening passive endpoint (fi_passive_ep + fi_listen) bound to the address of a
// listener ProviderRequest; port 0 picks a free port, read back with port(). Connection
// requests arrive on its EventQueue with the connector's private data; the owner inspects it
// and either opens an Endpoint from the request's info and accepts, or rejects here (the
// connector then fails with ECONNREFUSED). Every request taken must be answered one way or
// the other. The Fabric and the EventQueue must outlive it. Movable; one thread at a time.
class PassiveEndpoint {
public:
    static Result<PassiveEndpoint> listen(const Fabric& fabric, const fi_info& info,
                                          EventQueue& events);

    // The next connection request, waiting until `deadline` (ETIMEDOUT).
    Result<ConnectionRequest> wait_request(Deadline deadline);
    Result<void> reject(const ConnectionRequest& request,
                        std::span<const std::byte> private_data = {});

    // Stops taking connections: the listening socket is shut down, so the provider's next accept
    // fails (and it carries on); requests accepted before still arrive. The first step of
    // closing a tcp listener safely (port_sockets.h).
    void stop_listening() noexcept;
    // Whether `socket` is the listening socket stop_listening() shut down: no longer listening
    // (the kernel takes it out of LISTEN), bound to the port, with no peer, and closed only
    // with this endpoint, so a drain must not wait for it.
    bool is_stopped_listener(const PortSocket& socket) const noexcept;

    const std::string& address() const noexcept { return address_; } // "127.0.0.1:41234"
    std::uint16_t port() const noexcept { return port_; }
    fid_pep* get() const noexcept { return pep_.get(); }

private:
    PassiveEndpoint(EventQueue& events, FidPtr<fid_pep> pep, std::string address,
                    std::uint16_t port)
        : events_(&events)
        , pep_(std::move(pep))
        , address_(std::move(address))
        , port_(port) {}

    EventQueue* events_;
    FidPtr<fid_pep> pep_;
    std::string address_;
    std::uint16_t port_;
    std::vector<ino_t> stopped_; // the listening sockets stop_listening() shut down
};

} // namespace rpmem::fabric
