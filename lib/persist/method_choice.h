// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include "base/error.h"
#include "persist/platform.h"
#include "protocol/preferences.h"

namespace rpmem::persist {

// What the fabric provider serving a session can do, as far as durability is concerned.
struct ProviderTraits {
    // The provider moves data with the host CPU (tcp, sockets, ...): its "NIC writes" go through
    // the CPU caches like any store, so only eADR makes them durable without a flush.
    bool software = true;
    // FI_RMA_PMEM: FI_COMMIT_COMPLETE writes are flushed by the provider before they complete.
    bool offers_rma_pmem = false;
};

// Which methods the operator allows (rpmemd config: persist-apm, persist-general,
// persist-commit). With none of the keys named, gpspm and commit are allowed; once the config
// names any of them, only those it sets to yes (keys_named, which the reasons mention).
struct MethodPolicy {
    bool allow_apm = false;
    bool allow_gpspm = true;
    bool allow_commit = true;
    bool keys_named = false;
    // Only methods whose every round trip ends in a reply of the target's (gpspm): rpmemd's
    // inject-reply-delay holds those replies, while apm's reads and commit's writes are
    // acknowledged by the provider itself, which would leave them undelayed.
    bool replies_only = false;
};

struct MethodChoice {
    protocol::PersistMethod method; // never any
    // One sentence for the log and the client: why this method, and why each faster one was
    // passed over.
    std::string reason;
};

// The negotiation rule: the fastest method that is both allowed and valid here, preferring the
// client's choice (`preference`, any for none) when it is valid. Valid means:
//  - apm: the pool is persistent memory, and the domain is eADR, or the NIC is real hardware
//    whose writes bypass the caches (never a software provider without eADR: there a completed
//    read proves visibility, not durability);
//  - commit: the provider offers FI_RMA_PMEM and the pool is persistent memory (the provider's
//    flush is a cache flush, which does not make a file on a disk durable);
//  - gpspm: always (the target flushes with pmem_persist or msync).
// Order when the client states no valid preference: commit, apm, gpspm. Fails with EMEDIUMTYPE
// when the policy allows no valid method.
Result<MethodChoice> choose_method(const Platform& platform, const ProviderTraits& provider,
                                   bool pool_is_pmem, const MethodPolicy& policy,
                                   protocol::PersistMethod preference);

} // namespace rpmem::persist
