// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <memory>

#include "client/sibling_group.h"

namespace rpmem::capi {

// Which replicas are siblings: libpmemobj opens each REPLICA line of a pool set with its own
// rpmem_create/rpmem_open, always with the same local pool range, and nothing else in PMDK's C
// ABI says they belong together. So the C ABI keeps, per local range (address and size), the
// SiblingGroup its open replicas share (min-in-sync-replicas and fan-out); a range no replica
// uses any more is forgotten. The one registry of the process, as the C ABI needs it.
std::shared_ptr<client::SiblingGroup> siblings_of(const void* pool_addr, std::size_t pool_size,
                                                  unsigned min_in_sync, bool fan_out);

} // namespace rpmem::capi
