// SPDX-License-Identifier: BSD-3-Clause
#include "channel/logger.h"

#include <memory>

#include <spdlog/sinks/stdout_sinks.h>

namespace rpmem::channel {

spdlog::logger& logger() {
    static const std::shared_ptr<spdlog::logger> instance = [] {
        auto created = std::make_shared<spdlog::logger>(
            "rpmem.channel", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        created->set_level(spdlog::level::warn);
        return created;
    }();
    return *instance;
}

} // namespace rpmem::channel
