// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "librpmem.h"
#include "pool_memory.h"
#include "process.h"
#include "replica_pair.h"

namespace rpmem::test {

// Both replicas of a ReplicaPair created through librpmem's C entry points on one new local
// pool (kPoolSize), as libpmemobj does with two REPLICA lines. For a forked child: librpmem
// reads its settings once per process, and the pool is the child's until it exits.
struct OpenPair {
    std::byte* pool = nullptr;
    RPMEMpool* a = nullptr;
    RPMEMpool* b = nullptr;
    std::string failure; // empty when both were created
};

// With the client environment of `pair` (librpmem's log in `log`, RPMEM_TIMEOUT `timeout_ms`)
// and then `extra`.
inline OpenPair open_pair(const ReplicaPair& pair, const std::filesystem::path& log, int timeout_ms,
                          const EnvironmentChanges& extra) {
    apply_environment(pair.client_environment(log, timeout_ms));
    apply_environment(extra);
    OpenPair open;
    open.pool = pool_memory().release();
    unsigned lanes = 1;
    open.a =
        rpmem_create(pair.a.target().c_str(), "pool.set", open.pool, kPoolSize, &lanes, nullptr);
    if (open.a == nullptr) {
        open.failure = std::string("creating on a: ") + rpmem_errormsg();
        return open;
    }
    lanes = 1;
    open.b =
        rpmem_create(pair.b.target().c_str(), "pool.set", open.pool, kPoolSize, &lanes, nullptr);
    if (open.b == nullptr)
        open.failure = std::string("creating on b: ") + rpmem_errormsg();
    return open;
}

} // namespace rpmem::test
