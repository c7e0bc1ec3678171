// SPDX-License-Identifier: BSD-3-Clause
#include "client/syslog_sink.h"

#include <syslog.h>

namespace rpmem::client {

int syslog_priority_of(spdlog::level::level_enum level) noexcept {
    switch (level) {
    case spdlog::level::critical:
        return LOG_USER | LOG_CRIT;
    case spdlog::level::err:
        return LOG_USER | LOG_ERR;
    case spdlog::level::warn:
        return LOG_USER | LOG_WARNING;
    case spdlog::level::info:
        return LOG_USER | LOG_INFO;
    default:
        return LOG_USER | LOG_DEBUG;
    }
}

void SyslogSink::sink_it_(const spdlog::details::log_msg& message) {
    const auto& payload = message.payload;
    ::syslog(syslog_priority_of(message.level), "librpmem: %.*s", static_cast<int>(payload.size()),
             payload.data());
}

} // namespace rpmem::client
