// SPDX-License-Identifier: BSD-3-Clause
#include "base/library_logger.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>

namespace rpmem {

namespace {

// The one registry of library loggers and their shared configuration: what the libraries need
// to be configurable from outside without spdlog's global registry.
struct Registry {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> loggers;
    std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_sink_mt>()};
    spdlog::level::level_enum level = spdlog::level::warn;
};

Registry& registry() {
    static Registry instance;
    return instance;
}

} // namespace

spdlog::logger& library_logger(std::string_view name) {
    Registry& all = registry();
    const std::lock_guard lock(all.mutex);
    auto found = all.loggers.find(name);
    if (found == all.loggers.end()) {
        auto made =
            std::make_shared<spdlog::logger>(std::string(name), all.sinks.begin(), all.sinks.end());
        made->set_level(all.level);
        // Each line reaches its sink at once: the libraries log little (nothing by default
        // inside librpmem), and the application may abort right after a failure.
        made->flush_on(spdlog::level::trace);
        found = all.loggers.emplace(std::string(name), std::move(made)).first;
    }
    return *found->second;
}

void configure_library_loggers(std::vector<spdlog::sink_ptr> sinks,
                               spdlog::level::level_enum level) {
    Registry& all = registry();
    const std::lock_guard lock(all.mutex);
    all.sinks = std::move(sinks);
    all.level = level;
    for (auto& [name, logger] : all.loggers) {
        logger->sinks() = all.sinks;
        logger->set_level(level);
    }
}

} // namespace rpmem
