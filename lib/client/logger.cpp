// SPDX-License-Identifier: BSD-3-Clause
#include "client/logger.h"

#include <atomic>
#include <memory>
#include <mutex>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "base/library_logger.h"
#include "client/syslog_sink.h"

namespace rpmem::client {

namespace {

spdlog::level::level_enum level_of(const std::string& name) {
    if (name == "error")
        return spdlog::level::err;
    if (name == "warn")
        return spdlog::level::warn;
    if (name == "info")
        return spdlog::level::info;
    if (name == "debug")
        return spdlog::level::debug;
    if (name == "trace")
        return spdlog::level::trace;
    return spdlog::level::off;
}

std::atomic<LogDestination> chosen_destination{LogDestination::none};

} // namespace

spdlog::logger& logger() {
    // Looked up once: a logger is never removed, so each call is then only spdlog's atomic
    // level check, with no lock and no map lookup.
    static spdlog::logger& instance = library_logger("rpmem.client");
    return instance;
}

LogDestination log_destination() noexcept {
    return chosen_destination.load(std::memory_order_acquire);
}

void configure_logger(const Settings& settings) {
    static std::once_flag once;
    std::call_once(once, [&] {
        // info by default: a session's open and close, a replica that broke or went degraded,
        // and outcomes the caller handles itself (create of an existing pool, open of a missing
        // one) are each one line, rare enough for the system log.
        spdlog::level::level_enum level = level_of(settings.log_level.value_or("info"));
        LogDestination destination = LogDestination::system_log;
        if (!settings.log_file.empty())
            destination = LogDestination::file;
        else if (settings.log_level)
            destination = LogDestination::standard_error;
        if (level == spdlog::level::off)
            destination = LogDestination::none;

        std::vector<spdlog::sink_ptr> sinks;
        std::string file_problem;
        switch (destination) {
        case LogDestination::none:
            break;
        case LogDestination::system_log:
            sinks.push_back(std::make_shared<SyslogSink>());
            break;
        case LogDestination::standard_error:
            sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
            break;
        case LogDestination::file:
            try {
                sinks.push_back(
                    std::make_shared<spdlog::sinks::basic_file_sink_mt>(settings.log_file));
            } catch (const spdlog::spdlog_ex& error) {
                // The file was asked for, so the problem is said where it can be seen.
                file_problem = error.what();
                destination = LogDestination::standard_error;
                sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
            }
            break;
        }
        chosen_destination.store(destination, std::memory_order_release);
        configure_library_loggers(std::move(sinks), level);
        if (!file_problem.empty())
            logger().error("cannot log to {}: {}", settings.log_file, file_problem);
    });
}

} // namespace rpmem::client
