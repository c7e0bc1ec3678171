// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/info.h"

#include <cerrno>

namespace rpmem::fabric {

Result<InfoPtr> allocate_info() {
    InfoPtr info(fi_allocinfo());
    if (!info)
        return fail(ENOMEM, "fi_allocinfo: out of memory", ErrorSource::system, ENOMEM);
    return info;
}

Result<InfoPtr> duplicate_info(const fi_info& info) {
    InfoPtr copy(fi_dupinfo(&info));
    if (!copy)
        return fail(ENOMEM, "fi_dupinfo: out of memory", ErrorSource::system, ENOMEM);
    return copy;
}

} // namespace rpmem::fabric
