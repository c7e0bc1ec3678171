// SPDX-License-Identifier: BSD-3-Clause
// The failover subcommands: `rpmemctl promote`, `demote`, `rejoin` and `role`. They talk to the
// rpmemd that serves the pool set; the daemon answers only identities in its admin-client list.
#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "client/failover.h"
#include "command.h"
#include "json_writer.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kPromoteUsage =
    "usage: rpmemctl promote [user@]HOST[:PORT] SET [--force]\n"
    "\n"
    "Makes the replica SET (relative to rpmemd's pool set directory) a primary: rpmemd ends\n"
    "the session that has it open and waits until that session's writes stopped, moves its\n"
    "generation on, records it as promoted and rewrites its pool headers, so that libpmemobj\n"
    "opens SET's pool set file on that host as a pool of its own. rpmemd no longer serves it\n"
    "as a replica; the old primary, opening it again, gets a split-brain error.\n"
    "\n"
    "  --force  promote a replica that is not up to date (outdated, inconsistent, mid-resync):\n"
    "           writes the old primary acknowledged may be missing\n"
    "\n"
    "Exit status: 0 done, 1 refused or failed, 2 usage error.\n";

constexpr std::string_view kDemoteUsage =
    "usage: rpmemctl demote [user@]HOST[:PORT] SET [--generation N]\n"
    "\n"
    "Undoes a promote of SET that nothing used since (its data is unchanged): its headers,\n"
    "state and generation return to what they were, and the old primary may open it again.\n"
    "\n"
    "  --generation N  only if SET is promoted at generation N\n"
    "\n"
    "Exit status: 0 done, 1 refused or failed, 2 usage error.\n";

constexpr std::string_view kRejoinUsage =
    "usage: rpmemctl rejoin NEW_PRIMARY SET OLD_PRIMARY OLD_SET\n"
    "\n"
    "Turns the old primary's pool into a replica of the promoted SET. NEW_PRIMARY is the rpmemd\n"
    "that promoted SET; OLD_PRIMARY an rpmemd on the old primary's host whose pool set file\n"
    "OLD_SET names the old primary's parts (no REPLICA line; the application stopped). OLD_SET\n"
    "is recorded outdated at SET's generation and SET's headers are linked to it. Then add\n"
    "`REPLICA OLD_PRIMARY OLD_SET` to the pool set file the application uses on the new\n"
    "primary: its next open copies only the extents that differ (digest resync).\n"
    "\n"
    "Exit status: 0 done, 1 refused or failed, 2 usage error.\n";

constexpr std::string_view kRoleUsage =
    "usage: rpmemctl role [user@]HOST[:PORT] SET [--json]\n"
    "\n"
    "Prints the replica state (consistent, inconsistent, outdated, promoted), the generation,\n"
    "whether a promote would take it without --force, and the UUIDs of SET, without changing\n"
    "anything. While a session or a local program has SET open, the UUIDs are not read.\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

// The positional arguments and switches of a failover subcommand; nothing (after saying why
// on `err`) for a wrong command line.
struct Arguments {
    std::vector<std::string_view> positional;
    bool force = false;
    bool json = false;
    std::uint64_t generation = 0;
};

std::optional<Arguments> parse_arguments(std::span<const std::string_view> args,
                                         std::string_view command, std::size_t positional,
                                         std::vector<std::string_view> switches,
                                         std::ostream& err) {
    Arguments parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        auto allowed = [&](std::string_view name) {
            return std::find(switches.begin(), switches.end(), name) != switches.end();
        };
        if (arg == "--force" && allowed(arg)) {
            parsed.force = true;
        } else if (arg == "--json" && allowed(arg)) {
            parsed.json = true;
        } else if (arg == "--generation" && allowed(arg) && i + 1 < args.size()) {
            std::string_view value = args[++i];
            auto [rest, error] =
                std::from_chars(value.data(), value.data() + value.size(), parsed.generation);
            if (error != std::errc{} || rest != value.data() + value.size()) {
                err << "rpmemctl " << command << ": --generation needs a number\n";
                return std::nullopt;
            }
        } else if (arg.starts_with("-") || parsed.positional.size() == positional) {
            err << "rpmemctl " << command << ": unexpected argument '" << arg << "'\n";
            return std::nullopt;
        } else {
            parsed.positional.push_back(arg);
        }
    }
    if (parsed.positional.size() != positional) {
        err << "rpmemctl " << command << ": expected " << positional << " arguments\n";
        return std::nullopt;
    }
    return parsed;
}

std::optional<RemoteTarget> remote_of(std::string_view text, std::string_view command,
                                      std::ostream& err) {
    auto remote = RemoteTarget::from(text);
    if (!remote) {
        err << "rpmemctl " << command << ": " << remote.error().message() << "\n";
        return std::nullopt;
    }
    return std::move(*remote);
}

} // namespace

int run_promote_command(std::span<const std::string_view> args, std::ostream& out,
                        std::ostream& err) {
    return run_parsed(
        args, kPromoteUsage, out, err,
        [](auto a, std::ostream& e) { return parse_arguments(a, "promote", 2, {"--force"}, e); },
        [&](const Arguments& parsed) {
            auto remote = remote_of(parsed.positional[0], "promote", err);
            if (!remote)
                return kExitFailure;
            auto reply = client::promote(remote->settings, remote->target, parsed.positional[1],
                                         parsed.force);
            if (!reply) {
                err << "rpmemctl promote: " << reply.error().message() << "\n";
                return kExitFailure;
            }
            out << "promoted " << parsed.positional[1] << " on " << remote->target.to_string()
                << ": generation " << reply->previous_generation << " -> " << reply->generation
                << " (it was " << protocol::name_of(reply->previous_state) << ")";
            if (reply->sessions_ended != 0)
                out << "; the session that had it open was ended";
            out << "\n";
            if (!reply->message.empty())
                err << "rpmemctl promote: " << reply->message << "\n";
            return kExitOk;
        });
}

int run_demote_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
    return run_parsed(
        args, kDemoteUsage, out, err,
        [](auto a, std::ostream& e) {
            return parse_arguments(a, "demote", 2, {"--generation"}, e);
        },
        [&](const Arguments& parsed) {
            auto remote = remote_of(parsed.positional[0], "demote", err);
            if (!remote)
                return kExitFailure;
            auto reply = client::demote(remote->settings, remote->target, parsed.positional[1],
                                        parsed.generation);
            if (!reply) {
                err << "rpmemctl demote: " << reply.error().message() << "\n";
                return kExitFailure;
            }
            out << "demoted " << parsed.positional[1] << " on " << remote->target.to_string()
                << ": a replica again, " << protocol::name_of(reply->state) << " at generation "
                << reply->generation << "\n";
            return kExitOk;
        });
}

int run_rejoin_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
    return run_parsed(
        args, kRejoinUsage, out, err,
        [](auto a, std::ostream& e) { return parse_arguments(a, "rejoin", 4, {}, e); },
        [&](const Arguments& parsed) {
            auto primary = remote_of(parsed.positional[0], "rejoin", err);
            auto replica = remote_of(parsed.positional[2], "rejoin", err);
            if (!primary || !replica)
                return kExitFailure;
            auto joined = client::rejoin(primary->settings, primary->target, parsed.positional[1],
                                         replica->target, parsed.positional[3]);
            if (!joined) {
                err << "rpmemctl rejoin: " << joined.error().message() << "\n";
                return kExitFailure;
            }
            out << parsed.positional[3] << " on " << replica->target.to_string()
                << " is now a replica of " << parsed.positional[1] << " on "
                << primary->target.to_string() << " (" << protocol::name_of(joined->replica.state)
                << " at generation " << joined->replica.generation << ")\n"
                << "next: add the line\n  REPLICA " << parsed.positional[2] << " "
                << parsed.positional[3]
                << "\nto the pool set file the application opens on the new primary; its next "
                   "open brings the replica up to date by digest resync\n";
            return kExitOk;
        });
}

int run_role_command(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    return run_parsed(
        args, kRoleUsage, out, err,
        [](auto a, std::ostream& e) { return parse_arguments(a, "role", 2, {"--json"}, e); },
        [&](const Arguments& parsed) {
            auto remote = remote_of(parsed.positional[0], "role", err);
            if (!remote)
                return kExitFailure;
            auto reply = client::describe(remote->settings, remote->target, parsed.positional[1]);
            if (!reply) {
                err << "rpmemctl role: " << reply.error().message() << "\n";
                return kExitFailure;
            }
            const bool self_linked = reply->replica_uuid == reply->primary_uuid;
            const std::string role =
                reply->state == protocol::ReplicaState::promoted ? "primary" : "replica";
            if (parsed.json) {
                JsonWriter json;
                json.begin_object();
                json.key("pool_set").value(parsed.positional[1]);
                json.key("target").value(remote->target.to_string());
                json.key("role").value(role);
                json.key("state").value(protocol::name_of(reply->state));
                json.key("generation").value(reply->generation);
                json.key("poolset_uuid").value(uuid_text(reply->poolset_uuid));
                json.key("uuid").value(uuid_text(reply->primary_uuid));
                json.key("replica_uuid").value(uuid_text(reply->replica_uuid));
                json.key("linked_to_itself").value(self_linked && !reply->in_use);
                json.key("promotable").value(reply->promotable);
                json.key("in_use").value(reply->in_use);
                json.end_object();
                out << json.text() << "\n";
                return kExitOk;
            }
            out << parsed.positional[1] << " on " << remote->target.to_string() << ": " << role
                << ", " << protocol::name_of(reply->state) << " at generation " << reply->generation
                << (reply->promotable ? ", promotable" : ", not promotable without --force")
                << (reply->in_use ? ", in use (UUIDs not read)" : "") << "\n"
                << "  pool set uuid: " << uuid_text(reply->poolset_uuid) << "\n"
                << "  uuid: " << uuid_text(reply->primary_uuid) << "\n"
                << "  replica links: " << uuid_text(reply->replica_uuid)
                << (self_linked ? " (itself: opens alone)" : "") << "\n";
            return kExitOk;
        });
}

} // namespace rpmem::tools
