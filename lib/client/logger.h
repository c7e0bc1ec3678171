// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <spdlog/logger.h>

#include "client/settings.h"

namespace rpmem::client {

// The client library's logger ("rpmem.client", see base/library_logger.h). Useful because
// libpmemobj never shows rpmem_errormsg(): with RPMEM_LOG_LEVEL=error the reason a remote
// persist failed is printed before libpmemobj gives up.
spdlog::logger& logger();

// Applies RPMEM_LOG_LEVEL (default: off) and RPMEM_LOG_FILE (default: stderr) to every library
// logger of this process; the first call wins (the settings are read once). Tools and rpmemd
// that never call it keep the libraries' default (warnings to stderr).
void configure_logger(const Settings& settings);

} // namespace rpmem::client
