// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <spdlog/logger.h>

namespace rpmem::fabric {

// The fabric layer's own logger ("rpmem.fabric"), writing to stderr at level warn by default.
// It is not registered with spdlog, so the host application's global spdlog settings are
// untouched; an application that wants these lines elsewhere replaces the logger's sinks or
// level through this reference. Created on first use; thread-safe.
spdlog::logger& logger();

} // namespace rpmem::fabric
