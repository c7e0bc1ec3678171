// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>

#include "base/error.h"
#include "persist/request_handler.h"
#include "rpmemd/boundary/data_plane.h"

namespace rpmem::daemon {

class ResponderPool;

// Starts the real data plane of a session over libfabric (FabricTarget, in fabric_target.cpp):
// chooses the provider (the client's preference within the operator's allow list; otherwise
// verbs, then tcp, then sockets), listens on the bind host at a free port, registers the pool
// for remote reads and writes, and attaches itself to a thread of `responders`, which admits
// lane connections carrying the session's token, serves their persist messages and keeps the
// provider progressing (the tcp provider moves RMA data only while the target polls its
// completion queue). Null `responders`: a pool of one thread of its own (request's
// responder_spin and responder_cpu). Errors: EMEDIUMTYPE when no allowed provider is present, the
// fabric's errors otherwise, each naming the step.
//
// The region registered for remote access is the pool's data only: [protected_prefix, size).
Result<std::unique_ptr<DataPlane>> start_fabric_target(const DataPlaneRequest& request,
                                                       std::unique_ptr<persist::TargetPool> pool,
                                                       ResponderPool* responders);

// `mapping` as the request handler sees it (pmem_persist or msync through the mapping); it
// must outlive the result.
std::unique_ptr<persist::TargetPool> target_pool_of(const poolset::PoolMapping& mapping);

// The same over request.pool in this process (tests and rpmem-bench; rpmemd itself runs its
// data planes in workers, see WorkerDataPlane in rpmemd/worker/worker_pool.cpp).
Result<std::unique_ptr<DataPlane>> start_fabric_target(const DataPlaneRequest& request);

} // namespace rpmem::daemon
