// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/pool_store.h"

#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "base/log_text.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "rpmemd/status_error.h"

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
    return ReplicaStateFile(poolset::UniqueFd(::fcntl(file.parent.get(), F_DUPFD_CLOEXEC, 0)),
                            file.leaf, file.path);
}

} // namespace

PoolStore::PoolStore(std::string poolset_dir, std::map<std::string, std::string> client_dirs,
                     ResolveMethod resolve)
    : poolset_dir_(std::move(poolset_dir))
    , client_dirs_(client_dirs.begin(), client_dirs.end())
    , resolve_(resolve) {}

const std::string& PoolStore::directory_for(std::string_view identity) const {
    auto found = client_dirs_.find(identity);
    return found != client_dirs_.end() ? found->second : poolset_dir_;
}

Result<PoolStore::LocatedSet> PoolStore::locate(std::string_view identity, std::string_view name,
                                                bool validate) const {
    auto file = open_pool_set_file(directory_for(identity), name, resolve_);
    if (!file)
        return fail(std::move(file.error()));
    auto set = poolset::parse(file->text, file->path);
    if (!set)
        return fail(annotate(std::move(set.error()), Status::pool_config, "reading pool set"));
    if (validate) {
        if (auto valid = poolset::validate_for_target(*set); !valid)
            return fail(annotate(std::move(valid.error()), Status::pool_config,
                                 "rpmemd cannot serve this pool set"));
    }
    return LocatedSet{std::move(*file), std::move(*set)};
}

Result<PoolRegistry::Hold> PoolStore::reserve(const LocatedSet& located, std::string_view identity,
                                              std::uint64_t session) {
    return registry_.acquire({located.file.device, located.file.inode},
                             {directory_for(identity), located.file.name, session});
}

Result<std::unique_ptr<OpenPool>> PoolStore::create(const PoolRequest& request,
                                                    const PoolAttributes& attributes) {
    const std::string context = fmt::format("creating pool set '{}'", escape_for_log(request.name));
    auto located = locate(request.identity, request.name, true);
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

    auto hold = reserve(*located, request.identity, request.session);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
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

    return std::unique_ptr<OpenPool>(new OpenPool(std::move(*hold), request.name,
                                                  std::move(*mapping), attributes, true,
                                                  std::move(state_file), fresh));
}

Result<std::unique_ptr<OpenPool>> PoolStore::open(const PoolRequest& request) {
    const std::string context = fmt::format("opening pool set '{}'", escape_for_log(request.name));
    auto located = locate(request.identity, request.name, true);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    auto hold = reserve(*located, request.identity, request.session);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
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
                        "and is no longer a replica; rejoin it as a replica of the new primary "
                        "or remove it",
                        context, found.generation)));
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
    return std::unique_ptr<OpenPool>(new OpenPool(std::move(*hold), request.name,
                                                  std::move(*mapping), *attributes, false,
                                                  std::move(state_file), found));
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
    } else if (after) {
        if (auto written = pool->state_file_.write({*after, pool->found_.generation}); !written)
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
    }
    pool.reset();
    return outcome;
}

Result<void> PoolStore::remove(std::string_view identity, std::string_view name,
                               const RemovalFlags& options) {
    const std::string context = fmt::format("removing pool set '{}'", escape_for_log(name));
    auto located = locate(identity, name, false);
    if (!located)
        return fail(std::move(located.error()).add_context(context));
    auto hold = reserve(*located, identity, 0);
    if (!hold)
        return fail(std::move(hold.error()).add_context(context));
    if (auto removed = poolset::PoolMapping::remove(located->set, options.force); !removed)
        return fail(annotate(std::move(removed.error()), Status::pool_config, context));
    if (auto removed = state_file_of(located->file).remove(); !removed && !options.force)
        return fail(annotate(std::move(removed.error()), Status::fatal, context));
    if (options.remove_set_file) {
        const PoolSetFile& file = located->file;
        if (::unlinkat(file.parent.get(), file.leaf.c_str(), 0) != 0 && !options.force)
            return fail(annotate(Error::from_errno(errno, "unlinking " + file.path), Status::fatal,
                                 context));
    }
    return {};
}

} // namespace rpmem::daemon
