// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/daemon_event.h"
#include "protocol/session_status.h"
#include "rpmemd/supervisor/event_log.h"
#include "rpmemd/supervisor/session_directory.h"

namespace rpmem::daemon {

// Everything /metrics shows, gathered at one scrape.
struct MetricsSnapshot {
    std::string version;
    std::uint64_t uptime_seconds = 0;
    std::uint64_t sessions = 0;
    std::uint64_t max_sessions = 0;
    std::uint64_t pending_connections = 0;
    std::uint64_t max_pending_connections = 0;
    std::uint64_t workers = 0;
    std::uint64_t pools_in_use = 0;
    std::vector<protocol::SessionStatus> session_list; // every identity's
    DataPathCounters totals;                           // since the daemon started
    // Events recorded since the daemon started, by kind (index: the kind's wire value).
    EventLog::Totals events_total{};
};

// The snapshot in the Prometheus text exposition format (version 0.0.4): a HELP and TYPE line
// per metric family, label values escaped (client-supplied names escaped for logs first, so
// they are printable ASCII). Pure.
std::string render_metrics(const MetricsSnapshot& snapshot);

} // namespace rpmem::daemon
