// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl status TARGET [--json]`: asks a running rpmemd how it is doing: the daemon (version,
// uptime, sessions and limits, pending connections, workers) and each session the caller may
// see (identity, pool set, data path and why, replica state and generation, resync progress,
// what it persisted and how fast, time connected). The JSON form is documented in the README
// ("rpmemctl status --json") and kept stable: fields are added, never renamed.
#include <string>

#include <fmt/format.h>

#include "client/control.h"
#include "command.h"
#include "remote_target.h"
#include "status_json.h"

namespace rpmem::tools {

namespace {

struct StatusOptions {
    std::string target;
    bool json = false;
};

std::string duration_text(std::uint64_t ms) {
    const std::uint64_t s = ms / 1000;
    if (s < 60)
        return fmt::format("{}.{}s", s, (ms % 1000) / 100);
    if (s < 3600)
        return fmt::format("{}m{:02}s", s / 60, s % 60);
    return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string latency_text(std::uint64_t ns) {
    return ns < 1'000'000 ? fmt::format("{}us", ns / 1000) : fmt::format("{}ms", ns / 1'000'000);
}

void print_text(std::ostream& out, const Target& target, const protocol::StatusReply& status) {
    out << fmt::format("{}: {}, protocol {}, up {}\n", target.to_string(), status.software,
                       status.protocol_version, duration_text(status.uptime_seconds * 1000));
    out << fmt::format("  sessions: {} of {} ({} per client), pending connections: {} of {}, "
                       "workers: {}, pools in use: {}\n",
                       status.sessions, status.max_sessions, status.max_sessions_per_client,
                       status.pending_connections, status.max_pending_connections, status.workers,
                       status.pools_in_use);
    out << fmt::format("  {} session{}{}\n", status.session_list.size(),
                       status.session_list.size() == 1 ? "" : "s",
                       status.all_identities ? " (every identity)" : " (your identity's)");
    for (const auto& session : status.session_list) {
        out << fmt::format("  session {} {}@{}, connected {}\n", session.id, session.identity,
                           session.peer, duration_text(session.connected_ms));
        if (session.pool_set.empty()) {
            out << "    no pool open\n";
            continue;
        }
        out << fmt::format("    pool set {}: {} at generation {}\n", session.pool_set,
                           protocol::name_of(session.state), session.generation);
        out << fmt::format("    {} over {}, {} lane{}: {}\n",
                           protocol::name_of(session.persist_method), session.provider,
                           session.lanes, session.lanes == 1 ? "" : "s", session.method_reason);
        out << fmt::format("    persisted {} bytes in {} messages", session.persisted_bytes,
                           session.persists);
        if (session.persists > 0)
            out << fmt::format(", service time p50 <= {}, p99 <= {}",
                               latency_text(session.latency_p50_ns),
                               latency_text(session.latency_p99_ns));
        out << "\n";
        if (session.resync_active)
            out << fmt::format("    resync: {} of {} bytes\n", session.resync_done_bytes,
                               session.resync_total_bytes);
        if (session.ordered_messages > 0)
            out << fmt::format("    asynchronous: {} bytes behind at the last message (at most "
                               "{}), {} messages\n",
                               session.lag_bytes, session.max_lag_bytes, session.ordered_messages);
    }
}

int run_status(const StatusOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "status", remote.error());
    auto status = client::status(remote->settings, remote->target);
    if (!status)
        return report_failure(err, "status", status.error());
    if (options.json)
        out << json_text(status_json(remote->target, *status)) << "\n";
    else
        print_text(out, remote->target, *status);
    return kExitOk;
}

} // namespace

void add_status_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "status", "ask a running rpmemd how it is doing",
        "Ask a running rpmemd how it is doing: its version, uptime, limits and workers, and each\n"
        "session you may see (your identity's, or every identity's when rpmemd's admin-client\n"
        "names you).",
        kRemoteFooter, output, &run_status);
    command->add_option("TARGET", options->target, "rpmemd, as [user@]HOST[:PORT]")->required();
    command->add_flag("--json", options->json,
                      "one JSON document (its fields are listed in the README)");
}

} // namespace rpmem::tools
