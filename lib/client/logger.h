// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <spdlog/logger.h>

#include "client/settings.h"

namespace rpmem::client {

// The client library's own logger ("rpmem.client"), never registered with spdlog and never
// touching spdlog's global settings (they belong to the application). Off until configure()
// applies RPMEM_LOG_LEVEL / RPMEM_LOG_FILE; then it writes to stderr or that file. Useful
// because libpmemobj never shows rpmem_errormsg(): with RPMEM_LOG_LEVEL=error the reason a
// remote persist failed is printed before libpmemobj gives up.
spdlog::logger& logger();

// Applies the settings' level and file; the first call wins (the settings are read once).
void configure_logger(const Settings& settings);

} // namespace rpmem::client
