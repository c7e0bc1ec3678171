// SPDX-License-Identifier: BSD-3-Clause
// Issue 12's failover acceptance with hosts as network namespaces: host A (the initiator's
// namespace, 10.231.0.1) runs libpmemobj and, for the rejoin, its own rpmemd; host B (the
// target's, 10.231.0.2) runs the rpmemd that gets promoted. The flow is failover_flow.cpp's.
#include <catch2/catch.hpp>

#include "failover_flow.h"
#include "netns_pair.h"
#include "precondition.h"

using namespace rpmem::test;
using namespace rpmem::test::faults;

std::optional<std::string> rpmem::test::missing_precondition() {
    return NetnsPair::missing();
}

TEST_CASE("failover across network namespaces: promote, the old primary refused, rejoin") {
    NetnsPair net;
    FailoverHosts hosts;
    // One certificate for both daemons (A's shares B's credentials): it names both addresses.
    hosts.b.launcher = net.in_target({});
    hosts.b.listen_host = NetnsPair::kTargetAddress;
    hosts.b.server_names = {NetnsPair::kTargetAddress, NetnsPair::kInitiatorAddress};
    hosts.a.launcher = net.in_initiator({});
    hosts.a.listen_host = NetnsPair::kInitiatorAddress;
    hosts.on_a = net.in_initiator({});
    hosts.on_b = net.in_target({});
    run_failover_acceptance(hosts);
}
