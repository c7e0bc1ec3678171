// SPDX-License-Identifier: BSD-3-Clause
#include "client/logger.h"

#include <memory>
#include <mutex>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace rpmem::client {

namespace {

std::shared_ptr<spdlog::logger>& instance() {
    static std::shared_ptr<spdlog::logger> created = [] {
        auto made = std::make_shared<spdlog::logger>(
            "rpmem.client", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        made->set_level(spdlog::level::off);
        return made;
    }();
    return created;
}

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
    return *instance();
}

void configure_logger(const Settings& settings) {
    static std::once_flag once;
    std::call_once(once, [&] {
        if (!settings.log_file.empty()) {
            try {
                instance()->sinks() = {
                    std::make_shared<spdlog::sinks::basic_file_sink_mt>(settings.log_file)};
            } catch (const spdlog::spdlog_ex& error) {
                instance()->error("cannot log to {}: {}", settings.log_file, error.what());
            }
        }
        instance()->set_level(level_of(settings.log_level));
        instance()->flush_on(spdlog::level::err);
    });
}

} // namespace rpmem::client
