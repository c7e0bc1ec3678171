// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/shared_queue_endpoint.h"

#include <utility>

#include <rdma/fi_errno.h>

#include "fabric/fabric_error.h"

namespace rpmem::fabric {

Result<SharedQueueEndpoint> SharedQueueEndpoint::create(const Domain& domain, const fi_info& info,
                                                        EventQueue& events,
                                                        CompletionQueue& completions,
                                                        EndpointOptions options) {
    auto endpoint = Endpoint::open(domain, info, events, completions, options);
    if (!endpoint)
        return fail(std::move(endpoint.error()));
    return SharedQueueEndpoint(std::move(*endpoint));
}

Result<void> SharedQueueEndpoint::send(const MemoryRegion& source, std::size_t offset,
                                       std::size_t length, void* context) {
    auto op = message(source, offset, length, true, context);
    if (!op)
        return fail(std::move(op.error()));
    if (auto ok = usable(op->operation); !ok)
        return ok;
    const ssize_t ret = post(*op, FI_COMPLETION, context);
    if (ret == 0)
        return {};
    // Out of room: the provider frees entries as the shared queue's reader goes on.
    if (ret == -FI_EAGAIN)
        return fail(with_peer(connection_error(static_cast<int>(ret), op->operation, {})));
    return fail(with_peer(post_failure(static_cast<int>(ret), op->operation)));
}

} // namespace rpmem::fabric
