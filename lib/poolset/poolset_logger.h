// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <spdlog/logger.h>

namespace rpmem::poolset {

// The poolset layer's own logger ("rpmem.poolset", not registered with spdlog, warnings and
// errors to stderr): used only where an error cannot be returned (destructors).
spdlog::logger& logger();

} // namespace rpmem::poolset
