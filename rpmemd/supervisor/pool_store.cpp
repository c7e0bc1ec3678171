// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/pool_store.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "base/log_text.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "protocol/extent_digest.h"
#include "rpmemd/supervisor/pool_owner_file.h"
#include "rpmemd/supervisor/status_error.h"

namespace rpmem::daemon {

namespace {

using protocol::Status;

// `error` with `context` prepended, answering with the status it carries, or with the one its
// errno calls for (EINVAL: `einval_status`).
Error annotate(Error error, Status einval_status, std::string_view context) {
    Status status = reply_status_for(error, einval_status);
    return status_error(status, fmt::format("{}: {}", context, error.message()));
}

bool has_shutdown_state(const poolset::PoolHeader& header) {
    return (header.features.incompat & poolset::kFeatureShutdownState) != 0;
}

// The state file beside `file`, with its own descriptor of the directory.
ReplicaStateFile state_file_of(const PoolSetFile& file) {
    return ReplicaStateFile(UniqueFd(::fcntl(file.parent.get(), F_DUPFD_CLOEXEC, 0)), file.leaf,
                            file.path);
}

// The owner file beside `file`, with its own descriptor of the directory.
PoolOwnerFile owner_file_of(const PoolSetFile& file) {
    return PoolOwnerFile(UniqueFd(::fcntl(file.parent.get(), F_DUPFD_CLOEXEC, 0)), file.leaf,
                         file.path);
}

} // namespace

PoolStore::PoolStore(std::string poolset_dir, std::map<std::string, std::string> client_dirs,
                     ResolveMethod resolve, PoolTenancy tenancy)
    : poolset_dir_(std::move(poolset_dir))
    , client_dirs_(client_dirs.begin(), client_dirs.end())
    , resolve_(resolve)
    , tenancy_(std::move(tenancy)) {}

const std::string& PoolStore::directory_for(std::string_view identity) const {
    auto found = client_dirs_.find(identity);
    return found != client_dirs_.end() ? found->second : poolset_dir_;
}

Result<PoolStore::Tenure> PoolStore::tenure(const PoolSetFile& file, std::string_view identity,
                                            std::string_view name, Use use) const {
    if (use == Use::any || identity.empty())
        return Tenure::yours;
    auto owner = owner_file_of(file).read();
    if (!owner)
        return fail(annotate(std::move(owner.error()), Status::pool_config,
                             fmt::format("pool set '{}'", escape_for_log(name))));
    auto shared = tenancy_.shared.find(name);
    const bool is_shared = shared != tenancy_.shared.end() && shared->second.contains(identity);
    if (*owner) {
        if (**owner == identity || is_shared)
            return Tenure::yours;
        // The operator learns why; the client gets what a missing set file gets.
        spdlog::warn("identity '{}' asked for pool set '{}' of identity '{}': answered as a "
                     "missing pool set",
                     escape_for_log(identity), escape_for_log(name), escape_for_log(**owner));
        return Tenure::foreign;
    }
    if (is_shared)
        return Tenure::yours;
    if (use == Use::create || tenancy_.adopt_unowned)
        return Tenure::unowned;
    spdlog::warn("identity '{}' asked for pool set '{}', which has no owner recorded: answered "
                 "as a missing pool set (unowned-pool-sets = adopt gives such sets to the first "
                 "identity that opens them; README: Security)",
                 escape_for_log(identity), escape_for_log(name));
    return Tenure::unclaimed;
}

Result<bool> PoolStore::check_owner(const PoolSetFile& file, std::string_view identity,
                                    std::string_view name, Use use) const {
    auto found = tenure(file, identity, name, use);
    if (!found)
        return fail(std::move(found.error()));
    if (*found == Tenure::foreign || *found == Tenure::unclaimed)
        return fail(missing_pool_set_error(directory_for(identity), name));
    return *found == Tenure::unowned;
}

Result<void> PoolStore::record_owner(const LocatedSet& located, std::string_view identity,
                                     std::string_view context) const {
    if (!located.record_owner || identity.empty())
        return {};
    spdlog::info("pool set '{}' is identity '{}''s now", escape_for_log(located.file.name),
                 escape_for_log(identity));
    if (auto written = owner_file_of(located.file).write(identity); !written)
        return fail(annotate(std::move(written.error()), Status::fatal, context));
    return {};
}

Result<PoolStore::LocatedSet> PoolStore::locate(std::string_view identity, std::string_view name,
                                                bool validate, Use use) const {
    auto file = open_pool_set_file(directory_for(identity), name, resolve_);
    if (!file)
        return fail(std::move(file.error()));
    // Another identity's set answers as a missing one would, before it is even parsed; the
    // set file's own faults are the operator's and the same for every identity.
    auto held = tenure(*file, identity, name, use);
    if (!held)
        return fail(std::move(held.error()));
    if (*held == Tenure::foreign)
        return fail(missing_pool_set_error(directory_for(identity), name));
    auto set = poolset::parse(file->text, file->path);
    if (!set)
        return fail(annotate(std::move(set.error()), Status::pool_config, "reading pool set"));
    if (validate) {
        if (auto valid = poolset::validate_for_target(*set); !valid)
            return fail(annotate(std::move(valid.error()), Status::pool_config,
                                 "rpmemd cannot serve this pool set"));
    }
    // A set nobody owns, where that is refused: as missing, now that its file checked out.
    if (*held == Tenure::unclaimed)
        return fail(missing_pool_set_error(directory_for(identity), name));
    return LocatedSet{std::move(*file), std::move(*set), *held == Tenure::unowned};
}

Result<PoolRegistry::Hold> PoolStore::reserve(const LocatedSet& located, std::string_view identity,
                                              std::uint64_t session, PoolRegistry::Evict evict) {
    return registry_.acquire({located.file.device, located.file.inode},
                             {directory_for(identity), located.file.name, session},
                             std::move(evict));
}

Result<std::unique_ptr<OpenPool>> PoolStore::create(const PoolRequest& request,
                                                    const PoolAttributes& attributes) {
    const std::string context = fmt::format("creating pool set '{}'", escape_for_log(request.name));
    auto located = locate(request.identity, request.name, true, Use::create);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    const poolset::PoolSet& set = located->set;

    // The attribute rules first (a pure check with stand-in creation times): no file is
    // touched for a request that cannot succeed.
    std::vector<std::uint64_t> no_times(set.replicas[0].parts.size(), 0);
    if (auto rules = poolset::build_target_headers(set, attributes, no_times); !rules)
        return fail(annotate(std::move(rules.error()), Status::pool_config, context));
    if (auto size = set.pool_size(); size && *size < request.min_size)
        return fail(status_error(Status::bad_size,
                                 fmt::format("{}: the remote pool has {} bytes, the initiator's "
                                             "pool {}",
                                             context, *size, request.min_size)));

    auto hold = reserve(*located, request.identity, request.session, request.evict);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
    // Again under the hold: another identity may have created it since the first look.
    if (auto owned = check_owner(located->file, request.identity, request.name, Use::create);
        !owned)
        return fail(std::move(owned.error()).add_context(context));
    auto mapping = poolset::PoolMapping::create(set);
    if (!mapping)
        return fail(annotate(std::move(mapping.error()), Status::pool_config, context));

    // From here on a failure removes the part files this call created.
    auto undo = [&](Error error) {
        std::vector<std::string> created;
        const auto& parts = mapping->set().replicas[0].parts;
        for (std::size_t p = 0; p < parts.size(); ++p)
            if (mapping->created_parts()[p])
                created.push_back(parts[p].path);
        // Parts that existed empty before get their header pages zeroed again.
        std::vector<poolset::PoolHeader> zeros(mapping->read_headers().size());
        (void)mapping->write_headers(zeros);
        { auto unmapped = std::move(*mapping); }
        for (const std::string& path : created)
            (void)::unlink(path.c_str());
        return fail(std::move(error));
    };

    if (mapping->size() < request.min_size)
        return undo(status_error(Status::bad_size,
                                 fmt::format("{}: the remote pool has {} bytes, the initiator's "
                                             "pool {}",
                                             context, mapping->size(), request.min_size)));
    auto headers =
        poolset::build_target_headers(mapping->set(), attributes, mapping->creation_times());
    if (!headers)
        return undo(annotate(std::move(headers.error()), Status::pool_config, context));
    if (auto written = mapping->write_headers(*headers); !written)
        return undo(annotate(std::move(written.error()), Status::fatal, context));
    ReplicaStateFile state_file = state_file_of(located->file);
    const ReplicaRecord fresh{protocol::ReplicaState::inconsistent, 1};
    if (auto written = state_file.write(fresh); !written)
        return undo(annotate(std::move(written.error()), Status::fatal, context));
    if (auto owned = record_owner(*located, request.identity, context); !owned) {
        (void)state_file.remove();
        return undo(std::move(owned.error()));
    }

    return std::unique_ptr<OpenPool>(
        new OpenPool(std::move(*hold), request.name, std::move(*mapping), attributes, true,
                     std::move(state_file), owner_file_of(located->file), fresh));
}

Result<std::unique_ptr<OpenPool>> PoolStore::open(const PoolRequest& request) {
    const std::string context = fmt::format("opening pool set '{}'", escape_for_log(request.name));
    auto located = locate(request.identity, request.name, true, Use::open);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    auto hold = reserve(*located, request.identity, request.session, request.evict);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
    // Again under the hold: the set may have been removed and created by another identity.
    auto unowned = check_owner(located->file, request.identity, request.name, Use::open);
    if (!unowned)
        return fail(std::move(unowned.error()).add_context(context));
    located->record_owner = *unowned;
    auto mapping = poolset::PoolMapping::open(located->set);
    if (!mapping)
        return fail(annotate(std::move(mapping.error()), Status::pool_config, context));
    auto attributes = poolset::check_target_headers(mapping->set(), mapping->read_headers());
    if (!attributes)
        return fail(annotate(std::move(attributes.error()), Status::pool_config, context));
    if (mapping->size() < request.min_size)
        return fail(status_error(Status::bad_size,
                                 fmt::format("{}: the remote pool has {} bytes, the initiator's "
                                             "pool {}",
                                             context, mapping->size(), request.min_size)));

    ReplicaStateFile state_file = state_file_of(located->file);
    auto stored = state_file.read();
    if (!stored)
        return fail(annotate(std::move(stored.error()), Status::pool_config, context));
    // No state file: nothing is known of this copy's history, so it must be checked.
    const ReplicaRecord found = stored->value_or(ReplicaRecord{});
    if (found.state == protocol::ReplicaState::promoted)
        return fail(status_error(
            Status::split_brain,
            fmt::format("{}: split brain: this copy was promoted to a primary at generation {} "
                        "(it was a replica at generation {}{}) and is no longer a replica; the "
                        "initiator is the old primary: stop it, and make its pool a replica of "
                        "the new one with 'rpmemctl rejoin NEW_PRIMARY {} OLD_PRIMARY OLD_SET'",
                        context, found.generation,
                        found.undo ? found.undo->generation : found.generation - 1,
                        request.expected_generation != 0
                            ? fmt::format(", the initiator expects {}", request.expected_generation)
                            : "",
                        escape_for_log(request.name))));
    if (request.expected_generation != 0 && request.expected_generation != found.generation)
        return fail(status_error(
            Status::split_brain,
            fmt::format("{}: split brain: the initiator replicated generation {}, this copy is "
                        "at generation {}; compare both copies (rpmemctl verify) and rejoin the "
                        "one that is behind",
                        context, request.expected_generation, found.generation)));
    if (auto written = state_file.write({protocol::ReplicaState::inconsistent, found.generation});
        !written)
        return fail(annotate(std::move(written.error()), Status::fatal, context));
    if (auto owned = record_owner(*located, request.identity, context); !owned)
        return fail(std::move(owned.error()));
    return std::unique_ptr<OpenPool>(
        new OpenPool(std::move(*hold), request.name, std::move(*mapping), *attributes, false,
                     std::move(state_file), owner_file_of(located->file), found));
}

Result<std::optional<ReplicaRecord>> PoolStore::replica_record(std::string_view identity,
                                                               std::string_view name) const {
    auto located = locate(identity, name, false);
    if (!located)
        return fail(std::move(located.error()));
    auto record = state_file_of(located->file).read();
    if (!record)
        return fail(annotate(std::move(record.error()), Status::pool_config, "reading"));
    return record;
}

Result<void> PoolStore::set_attributes(OpenPool& pool, const PoolAttributes& attributes) {
    const std::string context =
        fmt::format("setting the attributes of pool set '{}'", escape_for_log(pool.name()));
    if (!pool.has_headers())
        return fail(status_error(Status::not_supported,
                                 context + ": the pool has no headers (OPTION NOHDRS)"));
    if (attributes.is_zero())
        return fail(status_error(Status::invalid_request,
                                 context + ": zero attributes would leave the headers blank"));
    auto headers = pool.mapping().read_headers();
    if (auto applied = poolset::apply_attributes(pool.set(), headers, attributes); !applied)
        return fail(annotate(std::move(applied.error()), Status::pool_config, context));
    if (auto written = pool.mapping().write_headers(headers); !written)
        return fail(annotate(std::move(written.error()), Status::fatal, context));
    pool.attributes_ = headers.front().attributes();
    return {};
}

std::optional<protocol::ReplicaState> state_after_close(CloseVerdict verdict,
                                                        protocol::ReplicaState found) noexcept {
    switch (verdict) {
    case CloseVerdict::lost:
    case CloseVerdict::lost_in_sync:
        return std::nullopt;
    case CloseVerdict::in_sync:
        return protocol::ReplicaState::consistent;
    case CloseVerdict::behind:
        return protocol::ReplicaState::outdated;
    case CloseVerdict::untouched:
        return found;
    }
    return std::nullopt;
}

Result<void> PoolStore::close(std::unique_ptr<OpenPool> pool, bool remove, CloseVerdict verdict) {
    const std::string context = fmt::format("closing pool set '{}'", escape_for_log(pool->name()));
    Result<void> outcome;
    // The state before the parts go, so a crash in between leaves the careful answer.
    const std::optional<protocol::ReplicaState> after =
        state_after_close(verdict, pool->found_.state);
    if (remove) {
        if (auto removed = pool->state_file_.remove(); !removed)
            outcome = fail(annotate(std::move(removed.error()), Status::fatal, context));
    } else if (verdict == CloseVerdict::untouched) {
        // The record as the session found it, lost-in-sync and promotion undo included: a
        // session that could not vouch for the copy changes nothing about what is known of it.
        if (auto written = pool->state_file_.write(pool->found_); !written)
            outcome = fail(annotate(std::move(written.error()), Status::fatal, context));
    } else if (after) {
        if (auto written = pool->state_file_.write({*after, pool->found_.generation}); !written)
            outcome = fail(annotate(std::move(written.error()), Status::fatal, context));
    } else if (verdict == CloseVerdict::lost_in_sync) {
        ReplicaRecord lost{protocol::ReplicaState::inconsistent, pool->found_.generation};
        lost.lost_in_sync = true;
        if (auto written = pool->state_file_.write(lost); !written)
            outcome = fail(annotate(std::move(written.error()), Status::fatal, context));
    }
    if (!remove && pool->has_headers()) {
        // The pool was shut down cleanly: PMDK clears the shutdown state's dirty flag on close.
        auto headers = pool->mapping().read_headers();
        if (!headers.empty() && has_shutdown_state(headers.front()) && headers.front().sds.dirty) {
            poolset::set_shutdown_dirty(headers.front(), false);
            if (auto written = pool->mapping().write_headers(headers); !written)
                outcome = fail(annotate(std::move(written.error()), Status::fatal, context));
        }
    }
    poolset::PoolSet set = pool->set();
    pool->mapping_.reset(); // unmaps and unlocks; the registry hold stays until pool goes
    if (remove) {
        if (auto removed = poolset::PoolMapping::remove(set, false); !removed)
            outcome = fail(annotate(std::move(removed.error()), Status::fatal,
                                    context + ": removing its parts"));
        else if (auto unowned = pool->owner_file_.remove(); !unowned)
            outcome = fail(annotate(std::move(unowned.error()), Status::fatal, context));
    }
    pool.reset();
    return outcome;
}

Result<void> PoolStore::remove(std::string_view identity, std::string_view name,
                               const RemovalFlags& options) {
    const std::string context = fmt::format("removing pool set '{}'", escape_for_log(name));
    auto located = locate(identity, name, false, Use::remove);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    auto hold = reserve(*located, identity, 0);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
    if (auto owned = check_owner(located->file, identity, name, Use::remove); !owned)
        return fail(std::move(owned.error()).add_context(context));
    if (auto removed = poolset::PoolMapping::remove(located->set, options.force); !removed)
        return fail(annotate(std::move(removed.error()), Status::pool_config, context));
    if (auto removed = state_file_of(located->file).remove(); !removed && !options.force)
        return fail(annotate(std::move(removed.error()), Status::fatal, context));
    // The owner goes last: a crash before leaves the set its owner's, with no parts.
    if (auto removed = owner_file_of(located->file).remove(); !removed && !options.force)
        return fail(annotate(std::move(removed.error()), Status::fatal, context));
    if (options.remove_set_file) {
        const PoolSetFile& file = located->file;
        if (::unlinkat(file.parent.get(), file.leaf.c_str(), 0) != 0 && !options.force)
            return fail(annotate(Error::from_errno(errno, "unlinking " + file.path), Status::fatal,
                                 context));
    }
    return {};
}

// ---- failover ---------------------------------------------------------------------------------

namespace {

// The digest of the pool's data, beyond the target's header page: what demote compares to
// prove that nothing used a promoted pool.
std::uint64_t data_digest(const poolset::PoolMapping& mapping, std::uint64_t prefix) {
    mapping.will_read(prefix, mapping.size() - prefix);
    return protocol::extent_digest(
        {reinterpret_cast<const std::byte*>(mapping.data()) + prefix, mapping.size() - prefix});
}

// The record in `file`, its failures answered with pool_config.
Result<std::optional<ReplicaRecord>> read_record(const ReplicaStateFile& file,
                                                 std::string_view context) {
    auto stored = file.read();
    if (!stored)
        return fail(annotate(std::move(stored.error()), Status::pool_config, context));
    return stored;
}

// The headers of `mapping`, checked as an open checks them; not_supported without headers.
Result<std::vector<poolset::PoolHeader>> checked_headers(const poolset::PoolMapping& mapping,
                                                         std::string_view context) {
    std::vector<poolset::PoolHeader> headers = mapping.read_headers();
    if (auto checked = poolset::check_target_headers(mapping.set(), headers); !checked)
        return fail(annotate(std::move(checked.error()), Status::pool_config, context));
    if (headers.empty())
        return fail(
            status_error(Status::not_supported,
                         fmt::format("{}: a pool without headers (OPTION NOHDRS)", context)));
    return headers;
}

bool is_self_linked(std::span<const poolset::PoolHeader> headers) {
    return !headers.empty() && headers.front().prev_repl_uuid == headers.front().uuid &&
           headers.front().next_repl_uuid == headers.front().uuid;
}

// A copy a promote takes without force: consistent, or lost while replicating synchronously.
bool is_up_to_date(const ReplicaRecord& record) {
    return record.state == protocol::ReplicaState::consistent ||
           (record.state == protocol::ReplicaState::inconsistent && record.lost_in_sync);
}

std::string state_text(const ReplicaRecord& record) {
    return fmt::format("{}{} at generation {}", protocol::name_of(record.state),
                       record.lost_in_sync ? " (lost in sync)" : "", record.generation);
}

} // namespace

Result<PoolStore::PromoteOutcome> PoolStore::promote(std::string_view identity,
                                                     std::string_view name, bool force,
                                                     std::chrono::milliseconds fence_timeout) {
    const std::string context = fmt::format("promoting pool set '{}'", escape_for_log(name));
    auto located = locate(identity, name, true);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    if (located->set.options.no_headers)
        return fail(status_error(Status::not_supported,
                                 context + ": a pool without headers (OPTION NOHDRS) cannot be "
                                           "opened as a pool of its own"));
    PromoteOutcome outcome;
    // Fencing: the session that has the set ends, its data plane stops and its mapping goes
    // before the hold is ours; from then on no session opens it (the registry, then the state).
    auto hold = registry_.take_over({located->file.device, located->file.inode},
                                    {directory_for(identity), located->file.name, 0}, fence_timeout,
                                    outcome.session_ended);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));

    ReplicaStateFile state_file = state_file_of(located->file);
    auto stored = read_record(state_file, context);
    if (!stored)
        return fail(std::move(stored.error()));
    outcome.before = stored->value_or(ReplicaRecord{});
    const ReplicaRecord& before = outcome.before;
    outcome.already = before.state == protocol::ReplicaState::promoted;

    auto mapping = poolset::PoolMapping::open(located->set);
    if (!mapping)
        return fail(annotate(std::move(mapping.error()), Status::pool_config, context));
    std::vector<poolset::PoolHeader> headers = mapping->read_headers();

    if (outcome.already) {
        if (!before.undo)
            return fail(status_error(Status::pool_config,
                                     context + ": the state file says promoted but keeps no "
                                               "record of the promote"));
        outcome.after = before;
    } else {
        auto checked = poolset::check_target_headers(mapping->set(), headers);
        if (!checked)
            return fail(annotate(std::move(checked.error()), Status::pool_config, context));
        const bool up_to_date = is_up_to_date(before);
        if (!up_to_date && !force)
            return fail(status_error(
                Status::invalid_request,
                fmt::format("{}: the replica is {}{}: it may lack acknowledged writes or be "
                            "half-way through a resync; promote only a consistent replica, or "
                            "pass --force to accept that loss",
                            context, state_text(before),
                            stored->has_value() ? ""
                                                : " (no state file: its history is unknown)")));
        if (!up_to_date)
            outcome.loss_note = fmt::format(
                "forced: the replica was {}; writes the old primary acknowledged may be missing "
                "and a resync may have stopped half-way (check the data before use)",
                state_text(before));
        // The intent first: a crash after this leaves a promoted set whose headers the next
        // promote finishes; the replica links and the data digest let demote undo it.
        PromotionUndo undo;
        undo.state = before.state;
        undo.generation = before.generation;
        undo.prev_replica = headers.front().prev_repl_uuid;
        undo.next_replica = headers.front().next_repl_uuid;
        undo.data_digest = data_digest(*mapping, poolset::kPoolHeaderSize);
        outcome.after = ReplicaRecord{protocol::ReplicaState::promoted, before.generation + 1};
        outcome.after.undo = undo;
        if (auto written = state_file.write(outcome.after); !written)
            return fail(annotate(std::move(written.error()), Status::fatal, context));
    }

    if (!outcome.already || !is_self_linked(headers) ||
        (has_shutdown_state(headers.front()) && headers.front().sds.dirty)) {
        const poolset::Uuid own = headers.front().uuid;
        poolset::link_replicas(headers, own, own);
        // The last session's data plane is stopped and every acknowledged write is durable:
        // the shutdown was clean as far as this copy goes (as a close would have said).
        if (has_shutdown_state(headers.front()))
            poolset::set_shutdown_dirty(headers.front(), false);
        if (auto written = mapping->write_headers(headers); !written)
            return fail(annotate(std::move(written.error()), Status::fatal, context));
        if (auto checked = poolset::check_target_headers(mapping->set(), headers); !checked)
            return fail(annotate(std::move(checked.error()), Status::pool_config, context));
    }
    return outcome;
}

Result<ReplicaRecord> PoolStore::demote(std::string_view identity, std::string_view name,
                                        std::uint64_t generation) {
    const std::string context = fmt::format("demoting pool set '{}'", escape_for_log(name));
    auto located = locate(identity, name, true);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    auto hold = reserve(*located, identity, 0);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
    ReplicaStateFile state_file = state_file_of(located->file);
    auto stored = read_record(state_file, context);
    if (!stored)
        return fail(std::move(stored.error()));
    if (!*stored || (*stored)->state != protocol::ReplicaState::promoted || !(*stored)->undo)
        return fail(status_error(Status::invalid_request,
                                 fmt::format("{}: it is {}, not promoted", context,
                                             *stored ? state_text(**stored) : "without state")));
    const ReplicaRecord& record = **stored;
    if (generation != 0 && generation != record.generation)
        return fail(status_error(Status::split_brain,
                                 fmt::format("{}: it is promoted at generation {}, not {}", context,
                                             record.generation, generation)));
    // A local libpmemobj that has the pool open holds its parts' flock: busy.
    auto mapping = poolset::PoolMapping::open(located->set);
    if (!mapping)
        return fail(annotate(std::move(mapping.error()), Status::pool_config, context));
    const PromotionUndo& undo = *record.undo;
    if (data_digest(*mapping, poolset::kPoolHeaderSize) != undo.data_digest)
        return fail(status_error(
            Status::invalid_request,
            fmt::format("{}: its data changed since the promote to generation {} (it was opened "
                        "or written as a primary): a demote would throw that away; make the "
                        "old primary a replica of it instead (rpmemctl rejoin)",
                        context, record.generation)));
    // Headers first: a crash after them leaves the set promoted (refused as a replica), and
    // the next demote rewrites the same links and then the state.
    std::vector<poolset::PoolHeader> headers = mapping->read_headers();
    poolset::link_replicas(headers, undo.prev_replica, undo.next_replica);
    if (auto written = mapping->write_headers(headers); !written)
        return fail(annotate(std::move(written.error()), Status::fatal, context));
    ReplicaRecord restored{undo.state, undo.generation};
    if (restored.state == protocol::ReplicaState::promoted)
        restored.state = protocol::ReplicaState::inconsistent;
    if (auto written = state_file.write(restored); !written)
        return fail(annotate(std::move(written.error()), Status::fatal, context));
    return restored;
}

Result<PoolAttributes::Uuid> PoolStore::rejoin(std::string_view identity, std::string_view name,
                                               std::uint64_t generation,
                                               const PoolAttributes::Uuid& poolset_uuid,
                                               const PoolAttributes::Uuid& primary_uuid) {
    const std::string context = fmt::format("rejoining pool set '{}'", escape_for_log(name));
    auto located = locate(identity, name, true);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    auto hold = reserve(*located, identity, 0);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
    auto mapping = poolset::PoolMapping::open(located->set);
    if (!mapping)
        return fail(annotate(std::move(mapping.error()), Status::pool_config, context));
    auto headers = checked_headers(*mapping, context);
    if (!headers)
        return fail(std::move(headers.error()));
    const poolset::PoolHeader& first = headers->front();
    if (first.poolset_uuid != poolset_uuid)
        return fail(status_error(Status::pool_config,
                                 context + ": it belongs to another pool set (its pool set UUID "
                                           "differs from the new primary's)"));
    if (first.prev_repl_uuid != primary_uuid || first.next_repl_uuid != primary_uuid)
        return fail(status_error(Status::pool_config,
                                 context + ": its headers do not link to the new primary's part "
                                           "(only the other half of a two-replica pair rejoins)"));
    ReplicaStateFile state_file = state_file_of(located->file);
    if (auto written = state_file.write({protocol::ReplicaState::outdated, generation}); !written)
        return fail(annotate(std::move(written.error()), Status::fatal, context));
    // The old primary's pool was made by a local program: nobody owns it yet.
    PoolOwnerFile owner_file = owner_file_of(located->file);
    auto owner = owner_file.read();
    if (!owner)
        return fail(annotate(std::move(owner.error()), Status::pool_config, context));
    if (!*owner && !identity.empty()) {
        if (auto written = owner_file.write(identity); !written)
            return fail(annotate(std::move(written.error()), Status::fatal, context));
    }
    return first.uuid;
}

Result<PoolStore::Identity> PoolStore::attach_replica(std::string_view identity,
                                                      std::string_view name,
                                                      const PoolAttributes::Uuid& replica_uuid) {
    const std::string context =
        fmt::format("attaching a replica to pool set '{}'", escape_for_log(name));
    const bool report_only =
        std::all_of(replica_uuid.begin(), replica_uuid.end(), [](auto b) { return b == 0; });
    auto located = locate(identity, name, true);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    Identity result;
    auto hold = reserve(*located, identity, 0);
    if (!hold && !(report_only && reply_status_for(hold.error()) == Status::busy))
        return fail(std::move(hold.error()).add_context(context));
    // A report works on a set in use (a session replicating to it): the state file alone.
    result.in_use = !hold;
    auto stored = read_record(state_file_of(located->file), context);
    if (!stored)
        return fail(std::move(stored.error()));
    result.record = stored->value_or(ReplicaRecord{});
    result.promotable = is_up_to_date(result.record);
    if (!report_only && result.record.state != protocol::ReplicaState::promoted)
        return fail(status_error(Status::invalid_request,
                                 fmt::format("{}: it is {}; only a promoted set (a primary) "
                                             "gets a replica attached",
                                             context, state_text(result.record))));
    if (result.in_use)
        return result;
    auto mapping = poolset::PoolMapping::open(located->set);
    if (!mapping) {
        // A local program (libpmemobj on a primary) holds the parts' locks.
        if (report_only && reply_status_for(mapping.error()) == Status::busy) {
            result.in_use = true;
            return result;
        }
        return fail(annotate(std::move(mapping.error()), Status::pool_config, context));
    }
    auto headers = checked_headers(*mapping, context);
    if (!headers)
        return fail(std::move(headers.error()));
    if (!report_only) {
        poolset::link_replicas(*headers, replica_uuid, replica_uuid);
        if (auto written = mapping->write_headers(*headers); !written)
            return fail(annotate(std::move(written.error()), Status::fatal, context));
    }
    const poolset::PoolHeader& first = headers->front();
    result.poolset_uuid = first.poolset_uuid;
    result.own_uuid = first.uuid;
    result.replica_uuid = first.next_repl_uuid;
    return result;
}

} // namespace rpmem::daemon
