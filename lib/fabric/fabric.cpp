// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/fabric.h"

#include "fabric/fabric_error.h"

namespace rpmem::fabric {

Result<Fabric> Fabric::open(const fi_info& info) {
    FidPtr<fid_fabric> fabric;
    const int ret = fi_fabric(info.fabric_attr, fabric.out(), nullptr);
    if (ret != 0)
        return fail(fabric_error(ret, "fi_fabric"));
    return Fabric(std::move(fabric));
}

} // namespace rpmem::fabric
