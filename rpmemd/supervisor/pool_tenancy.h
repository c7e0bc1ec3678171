// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <map>
#include <set>
#include <string>

namespace rpmem::daemon {

// Which identities may use a pool set besides the one that created it (its owner, recorded in
// its PoolOwnerFile). The default shares nothing.
struct PoolTenancy {
    // Pool set name (relative to the pool set directory) -> the identities that may create,
    // open and remove it whoever owns it (config: shared-pool-set).
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> shared;
    // A set with no owner recorded (made before owners were, or by hand) goes to the first
    // identity that opens or removes it; otherwise it is refused to every identity as if it
    // did not exist (config: unowned-pool-sets = adopt | refuse). Creating one always records
    // its creator.
    bool adopt_unowned = false;
};

} // namespace rpmem::daemon
