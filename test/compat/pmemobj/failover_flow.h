// SPDX-License-Identifier: BSD-3-Clause
// Issue 12's failover acceptance with Debian's unmodified libpmemobj, on two "hosts": the
// loopback of this machine (compat suite) or two network namespaces (faults suite).
#pragma once

#include <string>
#include <vector>

#include "rpmemd_instance.h"

namespace rpmem::test {

// Where the two hosts are: rpmemd options of B (the replica, promoted) and of A (the old
// primary's own rpmemd for the rejoin; it shares B's credentials, so B's certificate must name
// A's address too), and the command prefixes that run a program on A or on B.
struct FailoverHosts {
    RpmemdInstance::Options b;
    RpmemdInstance::Options a;
    std::vector<std::string> on_a;
    std::vector<std::string> on_b;
};

// libpmemobj on A replicates to rpmemd on B and is killed -9 mid-run; `rpmemctl promote` on
// B; libpmemobj opens B's own pool set file and sees every acknowledged transaction; A, back
// with its old pool set, is refused with a split-brain message naming both generations and
// rpmemctl rejoin, and B's copy stays byte for byte the same; B goes on alone; a promote of a
// replica that is not consistent is refused without --force; `rpmemctl rejoin` makes A's pool
// B's replica and B's next open resyncs it; the pair passes `pmempool check`; A, promoted in
// turn, holds B's later transactions. Catch2 assertions.
void run_failover_acceptance(const FailoverHosts& hosts);

} // namespace rpmem::test
