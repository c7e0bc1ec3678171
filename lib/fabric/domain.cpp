// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/domain.h"

#include "fabric/fabric_error.h"

namespace rpmem::fabric {

Result<Domain> Domain::open(const Fabric& fabric, const fi_info& info) {
    FidPtr<fid_domain> domain;
    const int ret = fi_domain(fabric.get(), const_cast<fi_info*>(&info), domain.out(), nullptr);
    if (ret != 0)
        return fail(fabric_error(ret, "fi_domain"));
    return Domain(fabric.get(), std::move(domain), Capabilities::from_info(info));
}

} // namespace rpmem::fabric
