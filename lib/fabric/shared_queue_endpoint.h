// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>

#include "base/error.h"
#include "fabric/completion_queue.h"
#include "fabric/endpoint.h"

namespace rpmem::fabric {

// A connected endpoint bound to a completion queue that serves many endpoints: one accepted
// lane of a target, whose session's queue a responder thread reads (rpmemd's FabricTarget, the
// bench's raw target). That reader routes each completion by its operation context, so every
// operation is posted signalled and nothing here reads the queue. A post the provider has no
// room for fails with EAGAIN: only the queue's reader can make room.
//
// The Domain, the EventQueue and the shared CompletionQueue must outlive it. Movable. One thread
// at a time posts.
class SharedQueueEndpoint : public Endpoint {
public:
    static Result<SharedQueueEndpoint> create(const Domain& domain, const fi_info& info,
                                              EventQueue& events, CompletionQueue& completions,
                                              EndpointOptions options = {});

    // Sends source[offset, +length); its completion, with `context`, goes to the shared queue.
    Result<void> send(const MemoryRegion& source, std::size_t offset, std::size_t length,
                      void* context);

private:
    explicit SharedQueueEndpoint(Endpoint endpoint)
        : Endpoint(std::move(endpoint)) {}
};

} // namespace rpmem::fabric
