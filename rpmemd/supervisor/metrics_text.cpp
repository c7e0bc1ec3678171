// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/metrics_text.h"

#include <iterator>

#include <fmt/format.h>

#include "base/log_text.h"
#include "protocol/latency_histogram.h"

namespace rpmem::daemon {

namespace {

// A label value: printable ASCII (escape_for_log) with '\\', '"' and newlines escaped as the
// text format asks.
std::string label_value(std::string_view text) {
    std::string escaped;
    for (char c : escape_for_log(text)) {
        if (c == '\\' || c == '"')
            escaped += '\\';
        escaped += c;
    }
    return escaped;
}

class Writer {
public:
    void family(std::string_view name, std::string_view type, std::string_view help) {
        fmt::format_to(std::back_inserter(text_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name,
                       type);
    }
    void sample(std::string_view name, std::string_view labels, std::uint64_t value) {
        if (labels.empty())
            fmt::format_to(std::back_inserter(text_), "{} {}\n", name, value);
        else
            fmt::format_to(std::back_inserter(text_), "{}{{{}}} {}\n", name, labels, value);
    }
    void sample(std::string_view name, std::string_view labels, double value) {
        if (labels.empty())
            fmt::format_to(std::back_inserter(text_), "{} {}\n", name, value);
        else
            fmt::format_to(std::back_inserter(text_), "{}{{{}}} {}\n", name, labels, value);
    }
    void gauge(std::string_view name, std::string_view help, std::uint64_t value) {
        family(name, "gauge", help);
        sample(name, {}, value);
    }
    std::string take() { return std::move(text_); }

private:
    std::string text_;
};

std::string replica_labels(const protocol::SessionStatus& session) {
    // Not the session id: a reconnect then continues the same series (one session at a time
    // has a pool set open).
    return fmt::format("pool_set=\"{}\",identity=\"{}\"", label_value(session.pool_set),
                       label_value(session.identity));
}

// One gauge family with a sample per open pool set.
template <typename Value>
void pool_set_gauge(Writer& out, const MetricsSnapshot& snapshot, std::string_view name,
                    std::string_view help, Value&& value_of) {
    out.family(name, "gauge", help);
    for (const auto& session : snapshot.session_list)
        if (!session.pool_set.empty())
            out.sample(name, replica_labels(session), std::uint64_t{value_of(session)});
}

} // namespace

std::string render_metrics(const MetricsSnapshot& snapshot) {
    Writer out;
    out.family("rpmemd_build_info", "gauge", "rpmemd's version; always 1.");
    out.sample("rpmemd_build_info", fmt::format("version=\"{}\"", label_value(snapshot.version)),
               std::uint64_t{1});
    out.gauge("rpmemd_uptime_seconds", "Seconds since rpmemd started.", snapshot.uptime_seconds);
    out.gauge("rpmemd_sessions", "Open control sessions (past TLS and Hello).", snapshot.sessions);
    out.gauge("rpmemd_sessions_limit", "max-sessions: the most sessions rpmemd admits.",
              snapshot.max_sessions);
    out.gauge("rpmemd_pending_connections",
              "Connections accepted and not yet through TLS and Hello.",
              snapshot.pending_connections);
    out.gauge("rpmemd_pending_connections_limit", "max-pending-connections.",
              snapshot.max_pending_connections);
    out.gauge("rpmemd_workers", "Data-path worker processes running (one per client identity).",
              snapshot.workers);
    out.gauge("rpmemd_pools_in_use", "Pool sets open by a session.", snapshot.pools_in_use);

    out.family("rpmemd_persists_total", "counter",
               "Persist messages (inline persists and flushes) the data paths served.");
    out.sample("rpmemd_persists_total", {}, snapshot.totals.persists);
    out.family("rpmemd_persisted_bytes_total", "counter",
               "Bytes made durable by those persist messages.");
    out.sample("rpmemd_persisted_bytes_total", {}, snapshot.totals.persisted_bytes);

    const protocol::LatencyHistogram& latency = snapshot.totals.latency;
    out.family("rpmemd_persist_latency_seconds", "histogram",
               "Service time of a persist message at the target: from its arrival to its reply.");
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < protocol::kLatencyBucketBoundsNs.size(); ++i) {
        cumulative += latency.counts[i];
        out.sample("rpmemd_persist_latency_seconds_bucket",
                   fmt::format("le=\"{}\"",
                               static_cast<double>(protocol::kLatencyBucketBoundsNs[i]) / 1e9),
                   cumulative);
    }
    cumulative += latency.counts.back();
    out.sample("rpmemd_persist_latency_seconds_bucket", "le=\"+Inf\"", cumulative);
    out.sample("rpmemd_persist_latency_seconds_sum", {}, static_cast<double>(latency.sum_ns) / 1e9);
    out.sample("rpmemd_persist_latency_seconds_count", {}, cumulative);

    out.family("rpmemd_events_total", "counter",
               "Events rpmemd recorded (rpmemctl events), by kind; kind=\"refused\" counts "
               "refused connections and requests.");
    for (std::uint16_t wire = 1; wire < snapshot.events_total.size(); ++wire) {
        auto kind = protocol::event_kind_from_wire(wire);
        if (!kind)
            continue;
        out.sample("rpmemd_events_total", fmt::format("kind=\"{}\"", protocol::name_of(*kind)),
                   snapshot.events_total[wire]);
    }

    out.family("rpmemd_replica_state", "gauge",
               "The recorded state of each pool set a session has open: 1 for its state.");
    for (const auto& session : snapshot.session_list) {
        if (session.pool_set.empty())
            continue;
        for (auto state : {protocol::ReplicaState::consistent, protocol::ReplicaState::inconsistent,
                           protocol::ReplicaState::outdated, protocol::ReplicaState::promoted})
            out.sample(
                "rpmemd_replica_state",
                fmt::format("{},state=\"{}\"", replica_labels(session), protocol::name_of(state)),
                std::uint64_t{session.state == state ? 1U : 0U});
    }
    pool_set_gauge(out, snapshot, "rpmemd_replica_generation",
                   "The generation of each pool set a session has open.",
                   [](const protocol::SessionStatus& session) { return session.generation; });
    pool_set_gauge(out, snapshot, "rpmemd_resync_remaining_bytes",
                   "Bytes an initiator still has to copy to bring the replica up to date, as it "
                   "reports them; 0 when no resync runs.",
                   [](const protocol::SessionStatus& session) {
                       return session.resync_active
                                  ? session.resync_total_bytes - session.resync_done_bytes
                                  : std::uint64_t{0};
                   });
    pool_set_gauge(out, snapshot, "rpmemd_replication_lag_bytes",
                   "Asynchronous replication: the bytes the initiator still had queued behind the "
                   "last message of ordered records it sent (the replica is behind by at least "
                   "that); 0 when synchronous.",
                   [](const protocol::SessionStatus& session) { return session.lag_bytes; });
    pool_set_gauge(out, snapshot, "rpmemd_replication_lag_max_bytes",
                   "Asynchronous replication: the most rpmemd_replication_lag_bytes was in the "
                   "session.",
                   [](const protocol::SessionStatus& session) { return session.max_lag_bytes; });
    return out.take();
}

} // namespace rpmem::daemon
