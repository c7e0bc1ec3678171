// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/poolset_logger.h"

#include <memory>

#include <spdlog/sinks/stdout_sinks.h>

namespace rpmem::poolset {

spdlog::logger& logger() {
    static spdlog::logger instance = [] {
        spdlog::logger made("rpmem.poolset", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        made.set_level(spdlog::level::warn);
        return made;
    }();
    return instance;
}

} // namespace rpmem::poolset
