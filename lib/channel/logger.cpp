// SPDX-License-Identifier: BSD-3-Clause
#include "channel/logger.h"

#include "base/library_logger.h"

namespace rpmem::channel {

spdlog::logger& logger() {
    return library_logger("rpmem.channel");
}

} // namespace rpmem::channel
