// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/poolset_logger.h"

#include "base/library_logger.h"

namespace rpmem::poolset {

spdlog::logger& logger() {
    // Looked up once: a logger is never removed, so each call is then only spdlog's atomic
    // level check, with no lock and no map lookup.
    static spdlog::logger& instance = library_logger("rpmem.poolset");
    return instance;
}

} // namespace rpmem::poolset
