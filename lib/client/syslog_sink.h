// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <mutex>

#include <spdlog/sinks/base_sink.h>

namespace rpmem::client {

// librpmem's default log destination: syslog(3), which journald or rsyslog receive on /dev/log.
// Unlike spdlog's syslog_sink it never calls openlog() or closelog(): those set the host
// program's process-wide identity, options and facility, which are the application's. Lines
// therefore carry the program's own tag (what `journalctl -t PROGRAM` selects), each message
// starting with "librpmem: ".
class SyslogSink final : public spdlog::sinks::base_sink<std::mutex> {
protected:
    void sink_it_(const spdlog::details::log_msg& message) override;
    void flush_() override {}
};

// The syslog(3) priority of an spdlog level (facility LOG_USER).
int syslog_priority_of(spdlog::level::level_enum level) noexcept;

} // namespace rpmem::client
