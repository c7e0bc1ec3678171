// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/logger.h"

#include "base/library_logger.h"

namespace rpmem::fabric {

spdlog::logger& logger() {
    return library_logger("rpmem.fabric");
}

} // namespace rpmem::fabric
