// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <spdlog/logger.h>

#include "client/settings.h"

namespace rpmem::client {

// The client library's logger ("rpmem.client", see base/library_logger.h).
spdlog::logger& logger();

// Where configure_logger() sent the library loggers of this process.
enum class LogDestination {
    none,           // RPMEM_LOG_LEVEL=off
    system_log,     // the default: syslog(3) at info (client/syslog_sink.h)
    standard_error, // RPMEM_LOG_LEVEL given without RPMEM_LOG_FILE
    file,           // RPMEM_LOG_FILE
};

// Applies the log settings to every library logger of this process; the first call wins (the
// settings are read once). stderr belongs to the application, so it gets lines only when
// RPMEM_LOG_LEVEL asks for them; by default they go to the system log, where an operator looks
// when libpmemobj only says "remote replica #N failed". Tools and rpmemd that never call it
// keep the libraries' default (warnings to stderr).
void configure_logger(const Settings& settings);

// What configure_logger() chose; none before it ran.
LogDestination log_destination() noexcept;

} // namespace rpmem::client
