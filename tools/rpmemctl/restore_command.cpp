// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl restore SET [--replica N] [--force]`: on the initiator, while the pool is not open,
// rebuilds the local pool (replica 0) of the pool set file SET from one of its remote replicas:
// the part files are made (or taken over), the replicated data is read over the data path, the
// local pool headers are rebuilt from the replica's attributes so that they link to it, and the
// replica is recorded consistent with the restored master. The runbook for "the initiator lost
// its pool" (README) ends here; libpmemobj then opens the set and finds what the replica held.
#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "client/master_proof.h"
#include "client/replica.h"
#include "client/settings.h"
#include "command.h"
#include "poolset/pool_header.h"
#include "poolset/pool_mapping.h"
#include "poolset/pool_set.h"
#include "progress_display.h"
#include "set_file.h"

namespace rpmem::tools {

namespace {

constexpr std::size_t kReadChunk = 4 << 20; // progress and reads in 4 MiB steps

struct RestoreOptions {
    std::string set;
    unsigned replica = 1;
    bool force = false;
};

// The remote replica `number` (1 for the first REPLICA line naming a host) of `set`.
Result<const poolset::ReplicaSpec*> chosen_replica(const poolset::PoolSet& set, unsigned number) {
    std::vector<const poolset::ReplicaSpec*> remotes;
    for (const poolset::ReplicaSpec& spec : set.replicas)
        if (spec.is_remote())
            remotes.push_back(&spec);
    if (remotes.empty())
        return fail(EINVAL, set.origin + ": no REPLICA line names a remote replica");
    if (number == 0 || number > remotes.size())
        return fail(EINVAL,
                    fmt::format("--replica {}: {} names {} remote replica{}", number, set.origin,
                                remotes.size(), remotes.size() == 1 ? "" : "s"));
    // The master's replica links name its two ring neighbours: with one other replica both are
    // that replica, whose own links then name the master. With more, the neighbours are other
    // replicas, whose UUIDs this replica's attributes alone do not give.
    if (set.replicas.size() != 2)
        return fail(EINVAL, fmt::format("{}: restore rebuilds a master with exactly one replica "
                                        "(the set has {}); keep one REPLICA line, restore, then "
                                        "add the others back and run `pmempool sync`",
                                        set.origin, set.replicas.size() - 1));
    return remotes[number - 1];
}

// The local part files: made anew where missing or blank, else opened as they are.
Result<poolset::PoolMapping> map_local(const poolset::PoolSet& set, bool& created) {
    auto made = poolset::PoolMapping::create(set, 0);
    created = bool(made);
    if (made || made.error().errno_value() != EEXIST)
        return made;
    return poolset::PoolMapping::open(set, 0);
}

// The headers of the restored master: the replica's pool set UUID, signature, major, features
// and arch flags; its own UUID the one the replica's links name; its links to the replica.
Result<std::vector<poolset::PoolHeader>> master_headers(const poolset::PoolMapping& mapping,
                                                        const PoolAttributes& replica) {
    if (replica.next_uuid != replica.prev_uuid)
        return fail(EINVAL, "the replica's ring links name two different neighbours: its set "
                            "has more replicas than this pool set file names");
    PoolAttributes master = replica;
    master.uuid = replica.prev_uuid;
    master.prev_uuid = master.next_uuid = replica.uuid;
    // build_target_headers adds the SINGLEHDR bit from the set's option itself.
    master.incompat_features &= ~poolset::kFeatureSingleHeader;
    poolset::PoolSet own = mapping.set();
    own.replicas.resize(1);
    auto headers = poolset::build_target_headers(own, master, mapping.creation_times());
    if (!headers)
        return fail(std::move(headers.error()).add_context("rebuilding the local pool headers"));
    // A pool rebuilt whole and closed is clean: no unsafe shutdown to report.
    if (!headers->empty() && (headers->front().features.incompat & poolset::kFeatureShutdownState))
        poolset::set_shutdown_dirty(headers->front(), false);
    return headers;
}

int restore(const RestoreOptions& options, std::ostream& out, std::ostream& err) {
    auto report = [&](const Error& error) { return report_failure(err, "restore", error); };
    auto set = load_set_file(options.set);
    if (!set)
        return report(set.error());
    if (set->options.no_headers)
        return report(Error(EINVAL, set->origin + ": OPTION NOHDRS is for rpmemd's sets"));
    auto spec = chosen_replica(*set, options.replica);
    if (!spec)
        return report(spec.error());
    auto settings = client::load_settings(client::process_environment());
    if (!settings)
        return report(settings.error());
    bool created = false;
    auto mapping = map_local(*set, created);
    if (!mapping)
        return report(std::move(mapping.error()).add_context("the local pool of " + set->origin));
    const std::size_t size =
        std::min<std::uint64_t>(set->pool_size().value_or(mapping->size()), mapping->size());
    const std::span<std::byte> pool(reinterpret_cast<std::byte*>(mapping->data()), size);
    const std::string name = fmt::format("{} {} (line {})", (*spec)->remote->target.to_string(),
                                         (*spec)->remote->set_path, (*spec)->line);

    unsigned lanes = 1;
    PoolAttributes attributes;
    // An inspection: nothing is copied onto the replica, and an older local pool is no refusal.
    auto replica =
        client::Replica::open(*settings, (*spec)->remote->target, (*spec)->remote->set_path, pool,
                              lanes, &attributes, false);
    if (!replica)
        return report(std::move(replica.error()).add_context("opening replica " + name));
    if (attributes.is_zero())
        return report(Error(EINVAL, "replica " + name +
                                        " has no pool headers (OPTION NOHDRS): "
                                        "nothing tells what its master was"));
    const client::MasterProof& proof = (*replica)->master_proof();
    if (proof.proven() && !options.force) {
        (void)(*replica)->close();
        return report(Error(EEXIST, fmt::format("the local pool is valid and not older than "
                                                "replica {}: {}. Nothing to restore (`rpmemctl "
                                                "verify` compares them); --force restores anyway",
                                                name, proof.reason)));
    }
    out << options.set << ": restoring the local pool ("
        << (created ? "new parts" : "parts taken over") << ") from replica " << name << ": "
        << (proof.verdict == client::MasterProof::Verdict::older ? proof.reason
            : proof.proven()                                     ? "--force"
                                                                 : proof.reason)
        << "\n";

    const ProgressDisplay display =
        ProgressDisplay::on(err, ::isatty(STDERR_FILENO) == 1, "rpmemctl restore: ");
    const std::size_t start = poolset::kHeaderSize;
    client::ProgressMeter progress("replica " + name + ": reading", size - start, display.interval,
                                   display.show);
    for (std::size_t offset = start; offset < size; offset += kReadChunk) {
        const std::size_t length = std::min(kReadChunk, size - offset);
        if (auto read = (*replica)->read(pool.subspan(offset, length), offset, 0); !read) {
            (void)(*replica)->close();
            return report(std::move(read.error())
                              .add_context(fmt::format("reading replica {} at offset {}; the local "
                                                       "pool is incomplete, run restore again",
                                                       name, offset)));
        }
        progress.advance(length);
    }
    progress.finish();
    if (auto persisted = mapping->persist(start, size - start); !persisted) {
        (void)(*replica)->close();
        return report(std::move(persisted.error()).add_context("making the local pool durable"));
    }
    // The headers last: until they are written the local pool proves nothing, so an interrupted
    // restore is never taken for a master (and is simply run again).
    auto headers = master_headers(*mapping, attributes);
    if (headers) {
        if (auto written = mapping->write_headers(*headers); !written)
            headers = fail(std::move(written.error()).add_context("writing the local headers"));
    }
    if (!headers) {
        (void)(*replica)->close();
        return report(headers.error());
    }
    (*replica)->mark_identical();
    if (auto closed = (*replica)->close(); !closed)
        return report(std::move(closed.error()).add_context("closing replica " + name));
    out << options.set << ": restored " << size - start << " bytes from replica " << name
        << "; the replica is consistent with the restored pool\n";
    return kExitOk;
}

} // namespace

void add_restore_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "restore", "rebuild a lost local pool from a remote replica",
        "Rebuild the local pool (the part files of the pool set file SET, replica 0) from the\n"
        "remote replica its REPLICA line names: missing or blank parts are created, the data is\n"
        "read over the data path, the local pool headers are rebuilt from the replica's\n"
        "attributes, and the replica is recorded consistent with the restored pool. Run it on\n"
        "the initiator while no application has the pool open. It refuses to overwrite a local\n"
        "pool that is valid and not older than the replica, unless --force.",
        "Exit status: 0 restored, 1 failed (nothing is trusted until it ends: run it\n"
        "again), 2 usage error.",
        output, &restore);
    command->add_option("SET", options->set, "the local pool set file")->required();
    command->add_option("--replica", options->replica,
                        "which remote replica to restore from, counting REPLICA lines that name "
                        "a host from 1 (default 1)");
    command->add_flag("--force", options->force,
                      "restore even over a local pool that is valid and not older than the "
                      "replica");
}

} // namespace rpmem::tools
