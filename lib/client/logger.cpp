// SPDX-License-Identifier: BSD-3-Clause
#include "client/logger.h"

#include <memory>
#include <mutex>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "base/library_logger.h"

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

} // namespace

spdlog::logger& logger() {
    return library_logger("rpmem.client");
}

void configure_logger(const Settings& settings) {
    static std::once_flag once;
    std::call_once(once, [&] {
        // By default only errors: a replica that cannot be created or opened, or that broke.
        // libpmemobj reports those as "remote replica #N failed" and never asks
        // rpmem_errormsg() why, so this line is the only place the reason reaches the user.
        // RPMEM_LOG_LEVEL=off silences even that.
        std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_sink_mt>()};
        std::string file_problem;
        if (!settings.log_file.empty()) {
            try {
                sinks = {std::make_shared<spdlog::sinks::basic_file_sink_mt>(settings.log_file)};
            } catch (const spdlog::spdlog_ex& error) {
                file_problem = error.what();
            }
        }
        configure_library_loggers(std::move(sinks), level_of(settings.log_level));
        if (!file_problem.empty())
            logger().error("cannot log to {}: {}", settings.log_file, file_problem);
    });
}

} // namespace rpmem::client
