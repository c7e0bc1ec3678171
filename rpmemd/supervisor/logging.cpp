// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/logging.h"

#include <cerrno>
#include <memory>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <syslog.h>
#include <unistd.h>

#include "base/library_logger.h"

namespace rpmem::daemon {

namespace {

constexpr const char* kFilePattern = "%Y-%m-%d %H:%M:%S.%e [%P] %l: %v";
constexpr const char* kStderrPattern = "rpmemd[%P] %l: %v";

void install(const spdlog::sink_ptr& sink, spdlog::level::level_enum level) {
    auto daemon_logger = std::make_shared<spdlog::logger>("rpmemd", sink);
    daemon_logger->set_level(level);
    daemon_logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(daemon_logger);
    // Every library logger, also those made later (rpmem.persist in a worker's code, ...).
    configure_library_loggers({sink}, level);
}

} // namespace

spdlog::level::level_enum to_spdlog_level(LogLevel level) noexcept {
    switch (level) {
    case LogLevel::err:
        return spdlog::level::err;
    case LogLevel::warn:
        return spdlog::level::warn;
    case LogLevel::notice:
        return spdlog::level::info;
    case LogLevel::info:
        return spdlog::level::debug;
    case LogLevel::debug:
        return spdlog::level::trace;
    }
    return spdlog::level::err;
}

void start_logging() {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_pattern(kStderrPattern);
    install(sink, spdlog::level::warn);
}

Result<void> configure_logging(const Config& config) {
    spdlog::sink_ptr sink;
    if (!config.log_file.empty()) {
        // Opened once here for a precise errno (spdlog's exception has none); 0640: logs name
        // clients and pools.
        int fd = ::open(config.log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
        if (fd < 0)
            return fail(
                Error::from_errno(errno, fmt::format("opening log file {}", config.log_file)));
        ::close(fd);
        try {
            sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(config.log_file, false);
        } catch (const spdlog::spdlog_ex& e) {
            return fail(EIO, fmt::format("opening log file {}: {}", config.log_file, e.what()),
                        ErrorSource::system);
        }
        sink->set_pattern(kFilePattern);
    } else if (config.use_syslog) {
        sink = std::make_shared<spdlog::sinks::syslog_sink_mt>("rpmemd", LOG_PID | LOG_NDELAY,
                                                               LOG_USER, false);
    } else {
        sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        sink->set_pattern(kStderrPattern);
    }
    install(sink, to_spdlog_level(config.log_level));
    return {};
}

} // namespace rpmem::daemon
