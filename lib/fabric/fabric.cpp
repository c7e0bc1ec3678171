// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/fabric.h"

#include "fabric/fabric_error.h"
#include "fabric/fabric_library.h"

namespace rpmem::fabric {

Result<Fabric> Fabric::open(const fi_info& info) {
    auto library = FabricLibrary::load();
    if (!library)
        return fail(library.error());
    FidPtr<fid_fabric> fabric;
    const int ret = (*library)->open_fabric(info.fabric_attr, fabric.out(), nullptr);
    if (ret != 0)
        return fail(fabric_error(ret, "fi_fabric"));
    return Fabric(std::move(fabric));
}

} // namespace rpmem::fabric
