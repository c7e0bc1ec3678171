// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

namespace rpmem::persist {

// Where a store becomes durable on the target machine.
enum class PersistenceDomain {
    adr,  // the memory controller: CPU caches must be flushed
    eadr, // the CPU caches too: a store that is visible is durable
};

// The target's description of its own hardware, from rpmemd's config: what the persistence
// methods' durability arguments rest on. A value type.
struct Platform {
    PersistenceDomain domain = PersistenceDomain::adr;
    // The RDMA NIC's writes bypass the CPU caches (DDIO off, non-allocating writes), so a read
    // after write on the same connection pushes them to the memory controller.
    bool nic_writes_bypass_cache = false;
    std::string type; // free text for logs, e.g. "x86_64 server, Optane DCPMM"
};

} // namespace rpmem::persist
