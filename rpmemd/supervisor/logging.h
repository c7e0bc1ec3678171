// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <spdlog/common.h>

#include "base/error.h"
#include "rpmemd/supervisor/config.h"

namespace rpmem::daemon {

// rpmemd's logging. The daemon owns spdlog's global setup (STYLE.md): its default logger
// "rpmemd" carries the daemon's and the sessions' lines (each session line starts with
// "session N"), and the loggers of the libraries it links (rpmem.channel, rpmem.poolset,
// rpmem.fabric) are pointed at the same sink and level. Tokens and remote keys are never
// logged. Call from main() only, before any other thread starts (spdlog's sink lists are not
// guarded).

// PMDK's level names on spdlog's scale. PMDK has five levels where spdlog has no "notice":
// err and warn keep their meaning, notice (start-up, each request and its outcome) is spdlog's
// info, info (details) is debug, and debug is trace.
spdlog::level::level_enum to_spdlog_level(LogLevel level) noexcept;

// Until the config is read everything goes to stderr at level warn (as PMDK did).
void start_logging();

// Applies the config: a log file (appended, flushed per line) if `log-file` is set, else
// syslog (LOG_USER, ident "rpmemd") with `use-syslog`, else stderr (the systemd journal);
// level from `log-level`. Fails (errno, naming the file) when the log file cannot be opened;
// logging then stays on stderr.
Result<void> configure_logging(const Config& config);

} // namespace rpmem::daemon
