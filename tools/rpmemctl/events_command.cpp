// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl events TARGET [--history] [--once]`: rpmemd's events as a stream of JSON lines, as
// `drbdsetup events2` shows DRBD's: first an "exists" line per session the caller may see,
// then one line per event as it happens (session opened, closed or lost; replica state
// changes; resync start, progress and end; refusals). rpmemd keeps the newest events in memory
// and the stream asks for them a few times a second over one control channel.
#include <chrono>
#include <limits>
#include <string>
#include <thread>

#include "client/control.h"
#include "command.h"
#include "protocol/message_limits.h"
#include "remote_target.h"
#include "status_json.h"

namespace rpmem::tools {

namespace {

struct EventsOptions {
    std::string target;
    bool history = false;
    bool once = false;
};

constexpr std::chrono::milliseconds kPollInterval{200};

// Prints one line; false once the output is gone (a closed pipe ends the stream quietly).
bool print_line(std::ostream& out, const Json& line) {
    out << json_text(line) << '\n';
    out.flush();
    return static_cast<bool>(out);
}

int run_events(const EventsOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "events", remote.error());
    auto control = remote->connect();
    if (!control)
        return report_failure(err, "events", control.error());
    auto failed = [&](const Error& error) { return report_failure(err, "events", error); };

    std::uint64_t after = 0;
    if (!options.history) {
        // Where the log stands now, then the sessions as they are: what follows is news.
        auto head = client::events_after(**control, remote->target,
                                         std::numeric_limits<std::uint64_t>::max());
        if (!head)
            return failed(head.error());
        after = head->newest_sequence;
        auto status = client::status(**control, remote->target);
        if (!status)
            return failed(status.error());
        for (const auto& session : status->session_list)
            if (!print_line(out, {{"kind", "exists"}, {"session", session_json(session)}}))
                return kExitOk;
    }
    for (;;) {
        auto reply = client::events_after(**control, remote->target, after);
        if (!reply)
            return failed(reply.error());
        if (after != 0 && reply->oldest_sequence > after + 1) {
            const std::uint64_t missed = reply->oldest_sequence - after - 1;
            if (!print_line(out, {{"kind", "events_dropped"}, {"count", missed}}))
                return kExitOk;
        }
        for (const auto& event : reply->events)
            if (!print_line(out, event_json(event)))
                return kExitOk;
        // A full reply may have more behind it; a short one covered the log to its newest.
        const bool full = reply->events.size() >= protocol::kMaxEventsPerReply;
        after = full ? reply->events.back().sequence : std::max(after, reply->newest_sequence);
        if (full)
            continue;
        if (options.once)
            break;
        std::this_thread::sleep_for(kPollInterval);
    }
    (*control)->close();
    return kExitOk;
}

} // namespace

void add_events_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "events", "follow rpmemd's events as JSON lines",
        "Print rpmemd's events as JSON lines, one per event, as they happen: first an \"exists\"\n"
        "line for each session you may see, then session_opened, session_closed, session_lost,\n"
        "state_changed, resync_started, resync_progress, resync_finished and refused lines. A\n"
        "gap in what rpmemd kept is reported as an \"events_dropped\" line.",
        kRemoteFooter, output, &run_events);
    command->add_option("TARGET", options->target, "rpmemd, as [user@]HOST[:PORT]")->required();
    command->add_flag("--history", options->history,
                      "start with the events rpmemd still keeps (the newest 4096) instead of the "
                      "\"exists\" lines");
    command->add_flag("--once", options->once, "stop after what is there now instead of following");
}

} // namespace rpmem::tools
