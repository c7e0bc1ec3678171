// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "poolset/pool_header.h"
#include "poolset/pool_mapping.h"
#include "poolset/pool_set.h"
#include "rpmemd/supervisor/pool_owner_file.h"
#include "rpmemd/supervisor/pool_registry.h"
#include "rpmemd/supervisor/pool_set_file.h"
#include "rpmemd/supervisor/pool_tenancy.h"
#include "rpmemd/supervisor/replica_state_file.h"

namespace rpmem::daemon {

// Which pool a request names, for whom.
struct PoolRequest {
    std::string identity;       // the client's certificate identity; chooses the directory
    std::string name;           // the pool set name, relative to that directory
    std::uint64_t min_size = 0; // the initiator's pool size: the remote pool must be as large
    std::uint64_t session = 0;  // for the registry and messages
    // open: the generation the initiator expects; 0: any (split_brain on another one).
    std::uint64_t expected_generation = 0;
    // How the session is asked to let the pool go (a promote takes it over); see PoolRegistry.
    PoolRegistry::Evict evict;
};

// What becomes of a replica's state when its session closes the pool.
enum class CloseVerdict {
    lost, // the session ended uncleanly: the replica stays inconsistent
    // ... while it replicated synchronously: inconsistent, but noted as holding every
    // acknowledged persist (ReplicaRecord::lost_in_sync)
    lost_in_sync,
    in_sync,   // the initiator vouches for every persist: consistent
    behind,    // the initiator went on without this copy: outdated
    untouched, // the session wrote nothing: the state it was opened in
};

// The state a close with `verdict` records for a replica found in state `found`; nothing for
// lost (the state file keeps saying inconsistent, as it has since the open).
std::optional<protocol::ReplicaState> state_after_close(CloseVerdict verdict,
                                                        protocol::ReplicaState found) noexcept;

// A pool opened or created by one session: the part files mapped and locked, the attributes
// its headers hold, and the daemon-wide reservation of its set. Made by PoolStore; owned by the
// session. Destroying it unmaps and unlocks the parts first and then releases the
// reservation. Not thread-safe (its session serialises its use).
class OpenPool {
public:
    OpenPool(const OpenPool&) = delete;
    OpenPool& operator=(const OpenPool&) = delete;
    ~OpenPool() = default;

    const std::string& name() const noexcept { return name_; }
    poolset::PoolMapping& mapping() noexcept { return *mapping_; }
    const poolset::PoolSet& set() const noexcept { return mapping_->set(); }
    // As stored in the headers; zero for NOHDRS.
    const PoolAttributes& attributes() const noexcept { return attributes_; }
    bool created() const noexcept { return created_; }
    bool has_headers() const noexcept { return !mapping_->set().options.no_headers; }
    // The replica's record when this session opened it (a new pool: inconsistent); its file
    // says inconsistent while the session has it.
    const ReplicaRecord& found() const noexcept { return found_; }
    // The bytes at the start of the pool that belong to the target (its header page), never
    // written or read by the client's data path; 0 for NOHDRS.
    std::uint64_t protected_prefix() const noexcept {
        return has_headers() ? poolset::kPoolHeaderSize : 0;
    }

private:
    friend class PoolStore;
    OpenPool(PoolRegistry::Hold hold, std::string name, poolset::PoolMapping mapping,
             PoolAttributes attributes, bool created, ReplicaStateFile state_file,
             PoolOwnerFile owner_file, ReplicaRecord found)
        : hold_(std::move(hold))
        , name_(std::move(name))
        , mapping_(std::move(mapping))
        , attributes_(attributes)
        , created_(created)
        , state_file_(std::move(state_file))
        , owner_file_(std::move(owner_file))
        , found_(found) {}

    PoolRegistry::Hold hold_; // declared first: released after the mapping is gone
    std::string name_;
    std::optional<poolset::PoolMapping> mapping_;
    PoolAttributes attributes_;
    bool created_ = false;
    ReplicaStateFile state_file_;
    PoolOwnerFile owner_file_; // removed with the pool
    ReplicaRecord found_;
};

// The pools rpmemd serves: pool set files found strictly beneath the pool set directory of the
// client's identity (client-poolset-dir, else poolset-dir), their part files created, opened,
// re-labelled and removed with PMDK rpmemd's rules (reference §6.5-6.9), and the registry of
// the pools in use. Each pool set is its creator's: create records the identity in an owner
// file beside the set file, and create, open and remove by any other identity (unless
// PoolTenancy shares the set) get exactly the answer a missing set file gets, before anything
// else is looked at, so that a refusal reveals nothing. The failover calls (admin identities
// only, checked by the session) and the local `rpmemd --remove` (an empty identity) see every
// set. Every error carries the protocol status to answer with (status_error.h).
// Thread-safe: sessions call it concurrently; each OpenPool belongs to one session.
class PoolStore {
public:
    // `poolset_dir` and `client_dirs` (identity -> directory) as in the config; `resolve` is the
    // pool set name resolution (default_resolve_method() in the daemon).
    PoolStore(std::string poolset_dir, std::map<std::string, std::string> client_dirs,
              ResolveMethod resolve, PoolTenancy tenancy = {});

    // The pool set directory of `identity`.
    const std::string& directory_for(std::string_view identity) const;

    // Creates the pool of `request.name` and writes the headers `attributes` call for (none
    // when zero, which the set must declare with OPTION NOHDRS; the SINGLEHDR option must
    // match the attributes' SINGLEHDR bit). Statuses: bad_name, no_exist, no_access (set file);
    // pool_config (a set rpmemd cannot serve, attributes not matching the set); exists (a part
    // holds data); busy (in use); bad_size (remote pool smaller than request.min_size);
    // no_space, others by errno. On failure the parts it created are removed again.
    Result<std::unique_ptr<OpenPool>> create(const PoolRequest& request,
                                             const PoolAttributes& attributes);

    // Opens the existing pool of `request.name` and checks its headers (PMDK's remote header
    // checks). Statuses as for create, no_exist for missing parts, pool_config for bad headers
    // or a bad state file, split_brain for a promoted replica or one at a generation other
    // than request.expected_generation. The state file says inconsistent before this returns.
    Result<std::unique_ptr<OpenPool>> open(const PoolRequest& request);

    // Rewrites the headers of `pool` from `attributes` (PMDK's set_attr) and makes them
    // durable. not_supported for a NOHDRS pool, invalid_request for zero attributes.
    Result<void> set_attributes(OpenPool& pool, const PoolAttributes& attributes);

    // Closes `pool`: marks its shutdown state clean (SDS pools), records the replica state the
    // verdict calls for, unmaps and unlocks it, and with `remove` unlinks its parts and its
    // state file (the set file stays) before releasing its reservation.
    Result<void> close(std::unique_ptr<OpenPool> pool, bool remove,
                       CloseVerdict verdict = CloseVerdict::lost);

    // The replica record of the set `name` without opening it (nothing: no state file).
    Result<std::optional<ReplicaRecord>> replica_record(std::string_view identity,
                                                        std::string_view name) const;

    struct RemovalFlags {
        bool force = false;           // ignore missing or locked parts
        bool remove_set_file = false; // also unlink the set file
    };
    // PMDK's `rpmemd --remove`: unlinks the parts of the set `name`, its state and owner files,
    // taking each part's lock; busy (even with force) when a session of this daemon has the
    // pool. An empty `identity` is the operator's (local) removal: no owner check.
    Result<void> remove(std::string_view identity, std::string_view name,
                        const RemovalFlags& options);

    // ---- failover (pool_store_roles.cpp) ----

    struct PromoteOutcome {
        ReplicaRecord before;
        ReplicaRecord after;
        bool session_ended = false; // a session had the set open and was ended (fenced)
        bool already = false;       // it was promoted before; only unfinished header work done
        std::string loss_note;      // with force on a copy that was not up to date: what is at risk
    };
    // Makes the replica `name` a primary. Takes the set over from any session that has it (the
    // session ends its channel, its data plane stops, then its mapping goes) within
    // `fence_timeout`. Refused (invalid_request) unless the replica is consistent or was lost in
    // sync, or `force`. Then, in this order, each step crash-safe and the whole idempotent: the
    // state file says promoted at generation + 1 with what demote needs (the replica links
    // before and the data's digest); the headers link to their own part 0 and part 0's shutdown
    // state is clean, so that libpmemobj opens the set file alone as a pool of its own.
    // not_supported for NOHDRS sets (nothing to open them as).
    Result<PromoteOutcome> promote(std::string_view identity, std::string_view name, bool force,
                                   std::chrono::milliseconds fence_timeout);

    // Undoes a promote that nothing used: refused (invalid_request) unless the set is promoted
    // (at `generation` unless 0) and its data's digest is the one recorded by the promote; then
    // the headers' replica links, the state and the generation return to what they were
    // (inconsistent when it was lost in sync, so the initiator checks it on its next open).
    // busy while the pool is open, also by a local libpmemobj (its flock).
    Result<ReplicaRecord> demote(std::string_view identity, std::string_view name,
                                 std::uint64_t generation);

    // Makes the old primary's pool `name` a replica of the new primary: its headers must carry
    // `poolset_uuid` and link to `primary_uuid`; it is recorded outdated at `generation`, so that
    // the new primary's next open resyncs it by digest. A set without an owner (the old
    // primary's pool was made by a local program) becomes `identity`'s. Returns its part 0's
    // UUID.
    Result<PoolAttributes::Uuid> rejoin(std::string_view identity, std::string_view name,
                                        std::uint64_t generation,
                                        const PoolAttributes::Uuid& poolset_uuid,
                                        const PoolAttributes::Uuid& primary_uuid);

    struct Identity {
        PoolAttributes::Uuid poolset_uuid{};
        PoolAttributes::Uuid own_uuid{};     // part 0
        PoolAttributes::Uuid replica_uuid{}; // what the replica links name
        ReplicaRecord record;
        bool promotable = false; // promote would take it without force
        bool in_use = false;     // held by a session or a local program: UUIDs left zero
    };
    // On a promoted set: links its headers to the replica whose part 0 is `replica_uuid`; a
    // zero one changes nothing and works on any set, also one in use (then from the state file
    // alone). Tells the set's identity and record.
    Result<Identity> attach_replica(std::string_view identity, std::string_view name,
                                    const PoolAttributes::Uuid& replica_uuid);

    // The pools in use (all directories).
    std::vector<PoolRegistry::Entry> pools_in_use() const { return registry_.entries(); }

private:
    struct LocatedSet {
        PoolSetFile file;
        poolset::PoolSet set;
        bool record_owner = false; // nobody owns it: the caller's success makes it identity's
    };
    // What a lookup is for: the tenancy check differs (see PoolTenancy).
    enum class Use {
        any, // failover (admin) and reading: no owner check
        create,
        open,
        remove,
    };
    Result<LocatedSet> locate(std::string_view identity, std::string_view name, bool validate,
                              Use use = Use::any) const;
    // Whose the set in `file` is, for `identity`.
    enum class Tenure {
        yours,     // identity's own, shared with it, or any set for Use::any and the operator
        unowned,   // nobody's: create (and open with adopt_unowned) make it identity's
        foreign,   // another identity's: refused before anything else is looked at
        unclaimed, // nobody's, where that is refused (after the set file's own checks, which
                   // are the operator's and the same for every identity)
    };
    Result<Tenure> tenure(const PoolSetFile& file, std::string_view identity, std::string_view name,
                          Use use) const;
    // tenure() as a check: true when the use would make it identity's, the missing-set error
    // when it is refused.
    Result<bool> check_owner(const PoolSetFile& file, std::string_view identity,
                             std::string_view name, Use use) const;
    Result<void> record_owner(const LocatedSet& located, std::string_view identity,
                              std::string_view context) const;
    Result<PoolRegistry::Hold> reserve(const LocatedSet& located, std::string_view identity,
                                       std::uint64_t session, PoolRegistry::Evict evict = {});

    const std::string poolset_dir_;
    const std::map<std::string, std::string, std::less<>> client_dirs_;
    const ResolveMethod resolve_;
    const PoolTenancy tenancy_;
    PoolRegistry registry_;
};

} // namespace rpmem::daemon
