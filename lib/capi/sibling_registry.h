// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <memory>

#include "client/sync_quorum.h"

namespace rpmem::capi {

// Which replicas are siblings: libpmemobj opens each REPLICA line of a pool set with its own
// rpmem_create/rpmem_open, always with the same local pool range, and nothing else in PMDK's C
// ABI says they belong together. So the C ABI keeps, per local range (address and size), the
// SyncQuorum its open replicas share; a range no replica uses any more is forgotten. The one
// registry of the process, as the C ABI needs it.
std::shared_ptr<client::SyncQuorum> siblings_of(const void* pool_addr, std::size_t pool_size,
                                                unsigned min_in_sync);

} // namespace rpmem::capi
