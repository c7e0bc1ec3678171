// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/poolset_logger.h"

#include "base/library_logger.h"

namespace rpmem::poolset {

spdlog::logger& logger() {
    return library_logger("rpmem.poolset");
}

} // namespace rpmem::poolset
