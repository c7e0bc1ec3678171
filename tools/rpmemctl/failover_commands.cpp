// SPDX-License-Identifier: BSD-3-Clause
// The failover subcommands: `rpmemctl promote`, `demote`, `rejoin` and `role`. They talk to the
// rpmemd that serves the pool set; the daemon answers only identities in its admin-client list.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "client/failover.h"
#include "command.h"
#include "json_text.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

struct FailoverOptions {
    std::string target;
    std::string pool_set;
    bool force = false;           // promote
    std::uint64_t generation = 0; // demote: only at this generation (0: any)
    bool json = false;            // role
    std::string old_target;       // rejoin: the old primary's rpmemd
    std::string old_pool_set;     // rejoin: its pool set file there
};

int run_promote(const FailoverOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "promote", remote.error());
    auto reply = client::promote(remote->settings, remote->target, options.pool_set, options.force);
    if (!reply)
        return report_failure(err, "promote", reply.error());
    out << "promoted " << options.pool_set << " on " << remote->target.to_string()
        << ": generation " << reply->previous_generation << " -> " << reply->generation
        << " (it was " << protocol::name_of(reply->previous_state) << ")";
    if (reply->sessions_ended != 0)
        out << "; the session that had it open was ended";
    out << "\n";
    if (!reply->message.empty())
        err << "rpmemctl promote: " << reply->message << "\n";
    return kExitOk;
}

int run_demote(const FailoverOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "demote", remote.error());
    auto reply =
        client::demote(remote->settings, remote->target, options.pool_set, options.generation);
    if (!reply)
        return report_failure(err, "demote", reply.error());
    out << "demoted " << options.pool_set << " on " << remote->target.to_string()
        << ": a replica again, " << protocol::name_of(reply->state) << " at generation "
        << reply->generation << "\n";
    return kExitOk;
}

int run_rejoin(const FailoverOptions& options, std::ostream& out, std::ostream& err) {
    auto primary = RemoteTarget::from(options.target);
    if (!primary)
        return report_failure(err, "rejoin", primary.error());
    auto replica = RemoteTarget::from(options.old_target);
    if (!replica)
        return report_failure(err, "rejoin", replica.error());
    auto joined = client::rejoin(primary->settings, primary->target, options.pool_set,
                                 replica->target, options.old_pool_set);
    if (!joined)
        return report_failure(err, "rejoin", joined.error());
    out << options.old_pool_set << " on " << replica->target.to_string() << " is now a replica of "
        << options.pool_set << " on " << primary->target.to_string() << " ("
        << protocol::name_of(joined->replica.state) << " at generation "
        << joined->replica.generation << ")\n"
        << "next: add the line\n  REPLICA " << options.old_target << " " << options.old_pool_set
        << "\nto the pool set file the application opens on the new primary; its next "
           "open brings the replica up to date by digest resync\n";
    return kExitOk;
}

int run_role(const FailoverOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "role", remote.error());
    auto reply = client::describe(remote->settings, remote->target, options.pool_set);
    if (!reply)
        return report_failure(err, "role", reply.error());
    const bool self_linked = reply->replica_uuid == reply->primary_uuid;
    const std::string role =
        reply->state == protocol::ReplicaState::promoted ? "primary" : "replica";
    if (options.json) {
        out << json_text({
                   {"pool_set", options.pool_set},
                   {"target", remote->target.to_string()},
                   {"role", role},
                   {"state", protocol::name_of(reply->state)},
                   {"generation", reply->generation},
                   {"poolset_uuid", uuid_text(reply->poolset_uuid)},
                   {"uuid", uuid_text(reply->primary_uuid)},
                   {"replica_uuid", uuid_text(reply->replica_uuid)},
                   {"linked_to_itself", self_linked && !reply->in_use},
                   {"promotable", reply->promotable},
                   {"in_use", reply->in_use},
               })
            << "\n";
        return kExitOk;
    }
    out << options.pool_set << " on " << remote->target.to_string() << ": " << role << ", "
        << protocol::name_of(reply->state) << " at generation " << reply->generation
        << (reply->promotable ? ", promotable" : ", not promotable without --force")
        << (reply->in_use ? ", in use (UUIDs not read)" : "") << "\n"
        << "  pool set uuid: " << uuid_text(reply->poolset_uuid) << "\n"
        << "  uuid: " << uuid_text(reply->primary_uuid) << "\n"
        << "  replica links: " << uuid_text(reply->replica_uuid)
        << (self_linked ? " (itself: opens alone)" : "") << "\n";
    return kExitOk;
}

constexpr const char* kFailoverFooter =
    "rpmemd answers only identities its admin-client list names. TARGET is rpmemd's\n"
    "[user@]HOST[:PORT]; SET is relative to its pool set directory.\n"
    "\n"
    "Exit status: 0 done, 1 refused or failed, 2 usage error.";

void add_target_and_set(CLI::App& command, FailoverOptions& options) {
    command.add_option("TARGET", options.target, "rpmemd, as [user@]HOST[:PORT]")->required();
    command.add_option("SET", options.pool_set, "the pool set file, as rpmemd names it")
        ->required();
}

} // namespace

void add_failover_commands(CLI::App& app, CommandOutput& output) {
    {
        auto [command, options] = add_command(
            app, "role", "a pool set's role, state and generation on rpmemd",
            "Prints the replica state (consistent, inconsistent, outdated, promoted), the\n"
            "generation, whether a promote would take it without --force, and the UUIDs of SET,\n"
            "without changing anything. While a session or a local program has SET open, the\n"
            "UUIDs are not read.",
            kFailoverFooter, output, &run_role);
        add_target_and_set(*command, *options);
        command->add_flag("--json", options->json, "one JSON object");
    }
    {
        auto [command, options] = add_command(
            app, "promote", "make a replica a primary, fencing its old primary",
            "Makes the replica SET a primary: rpmemd ends the session that has it open and waits\n"
            "until that session's writes stopped, moves its generation on, records it as\n"
            "promoted and rewrites its pool headers, so that libpmemobj opens SET's pool set file\n"
            "on that host as a pool of its own. rpmemd no longer serves it as a replica; the old\n"
            "primary, opening it again, gets a split-brain error.",
            kFailoverFooter, output, &run_promote);
        add_target_and_set(*command, *options);
        command->add_flag("--force", options->force,
                          "promote a replica that is not up to date (outdated, inconsistent, "
                          "mid-resync): writes the old primary acknowledged may be missing");
    }
    {
        auto [command, options] = add_command(
            app, "demote", "undo a promote nothing used",
            "Undoes a promote of SET that nothing used since (its data is unchanged): its\n"
            "headers, state and generation return to what they were, and the old primary may\n"
            "open it again.",
            kFailoverFooter, output, &run_demote);
        add_target_and_set(*command, *options);
        command
            ->add_option("--generation", options->generation,
                         "only if SET is promoted at this generation")
            ->check(CLI::PositiveNumber);
    }
    {
        auto [command, options] = add_command(
            app, "rejoin", "make the old primary a replica of the new one",
            "Turns the old primary's pool into a replica of the promoted SET. NEW_PRIMARY is the\n"
            "rpmemd that promoted SET; OLD_PRIMARY an rpmemd on the old primary's host whose pool\n"
            "set file OLD_SET names the old primary's parts (no REPLICA line; the application\n"
            "stopped). OLD_SET is recorded outdated at SET's generation and SET's headers are\n"
            "linked to it. Then add `REPLICA OLD_PRIMARY OLD_SET` to the pool set file the\n"
            "application uses on the new primary: its next open copies only the extents that\n"
            "differ (digest resync).",
            kFailoverFooter, output, &run_rejoin);
        command->add_option("NEW_PRIMARY", options->target, "the rpmemd that promoted SET")
            ->required();
        command->add_option("SET", options->pool_set, "the promoted pool set there")->required();
        command->add_option("OLD_PRIMARY", options->old_target, "an rpmemd on the old primary")
            ->required();
        command->add_option("OLD_SET", options->old_pool_set, "its pool set file of the old parts")
            ->required();
    }
}

} // namespace rpmem::tools
