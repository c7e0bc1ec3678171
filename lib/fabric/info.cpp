// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/info.h"

#include <cerrno>

namespace rpmem::fabric {

Result<InfoPtr> allocate_info() {
    auto library = FabricLibrary::load();
    if (!library)
        return fail(library.error());
    InfoPtr info((*library)->dupinfo(nullptr)); // what fi_allocinfo does
    if (!info)
        return fail(ENOMEM, "fi_allocinfo: out of memory", ErrorSource::system, ENOMEM);
    return info;
}

Result<InfoPtr> duplicate_info(const fi_info& info) {
    // `info` came from libfabric, so it is loaded.
    InfoPtr copy(FabricLibrary::loaded()->dupinfo(&info));
    if (!copy)
        return fail(ENOMEM, "fi_dupinfo: out of memory", ErrorSource::system, ENOMEM);
    return copy;
}

} // namespace rpmem::fabric
