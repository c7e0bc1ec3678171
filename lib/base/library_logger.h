// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string_view>
#include <vector>

#include <spdlog/common.h>
#include <spdlog/logger.h>

namespace rpmem {

// The libraries' loggers ("rpmem.fabric", "rpmem.channel", "rpmem.poolset", "rpmem.client"):
// named spdlog loggers that are never registered with spdlog and never touch its global
// settings, which belong to the host program. They start writing warnings and errors to
// stderr; configure_library_loggers() moves all of them, and any made later, at once (rpmemd
// to its own sinks; librpmem to what RPMEM_LOG_LEVEL and RPMEM_LOG_FILE say). Thread-safe.
// The reference stays valid for the process's life (loggers are never removed), so callers keep
// it rather than look it up per line (this takes a lock).
spdlog::logger& library_logger(std::string_view name);

void configure_library_loggers(std::vector<spdlog::sink_ptr> sinks,
                               spdlog::level::level_enum level);

} // namespace rpmem
