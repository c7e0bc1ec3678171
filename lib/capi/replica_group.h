// SPDX-License-Identifier: BSD-3-Clause
// rpmem/replica_group.h -- rpmem::ReplicaGroup, the C++ API for persisting a local pool to
// several remote replicas at once (rpmem project; pkg-config: rpmem-group).
//
// A header-only layer over librpmem.so.1's C ABI (librpmem.h): the C++ types are compiled into
// the program, so the library's ABI stays the frozen C one. The replicas of a group are opened
// on the same local pool range, which makes them siblings for librpmem: a persist to the group
// posts the range to every replica at once (fan-out, on by default; RPMEM_FAN_OUT=0 turns it
// off) and then waits for each replica's own acknowledgement, so N replicas cost about one round
// trip. Each replica keeps its own order, sticky errors and failure policy
// (RPMEM_ON_REPLICA_FAILURE, RPMEM_MIN_IN_SYNC_REPLICAS), as with separate rpmem_persist calls.
//
// Thread contract: as librpmem's. Lanes are the caller's: one thread per lane at a time, the
// same lane index on every replica of the group. create/open/close must not race with persists.
#ifndef RPMEM_REPLICA_GROUP_H
#define RPMEM_REPLICA_GROUP_H 1

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <librpmem.h>

namespace rpmem {

// One replica: "[user@]host[:port]" and a pool set file in rpmemd's pool set directory.
struct ReplicaTarget {
    std::string target;
    std::string pool_set;
};

// Why one replica of a group failed a call: its index in the group, errno, librpmem's message.
struct ReplicaFailure {
    std::size_t replica = 0;
    int error = 0;
    std::string message;
};

class ReplicaGroup {
public:
    // Creates the pool on every target for the local pool [pool, pool + size) (page aligned)
    // and connects `lanes` lanes at most (in: wanted; out: what every replica granted).
    // `attributes`: the remote pools' header attributes, or null for pools without headers.
    // Throws std::system_error naming the target when one fails; the replicas created before
    // it are closed again (their pools stay).
    static ReplicaGroup create(std::span<const ReplicaTarget> targets, void* pool, std::size_t size,
                               unsigned& lanes, const rpmem_pool_attr* attributes = nullptr) {
        return start(true, targets, pool, size, lanes, const_cast<rpmem_pool_attr*>(attributes));
    }

    // Opens the existing pools; `attributes` (when not null) receives the first replica's.
    static ReplicaGroup open(std::span<const ReplicaTarget> targets, void* pool, std::size_t size,
                             unsigned& lanes, rpmem_pool_attr* attributes = nullptr) {
        return start(false, targets, pool, size, lanes, attributes);
    }

    ReplicaGroup(ReplicaGroup&& other) noexcept
        : replicas_(std::exchange(other.replicas_, {})) {}
    ReplicaGroup& operator=(ReplicaGroup&& other) noexcept {
        if (this != &other) {
            (void)close();
            replicas_ = std::exchange(other.replicas_, {});
        }
        return *this;
    }
    ReplicaGroup(const ReplicaGroup&) = delete;
    ReplicaGroup& operator=(const ReplicaGroup&) = delete;
    ~ReplicaGroup() { (void)close(); }

    std::size_t size() const noexcept { return replicas_.size(); }
    // The C handle of replica `index`, for calls this class does not wrap (rpmem_read, ...).
    RPMEMpool* replica(std::size_t index) const noexcept { return replicas_.at(index); }

    // Persists [offset, +length) of the local pool to every replica on `lane`; `flags`:
    // 0 or RPMEM_PERSIST_RELAXED. Returns when every replica acknowledged or failed: one
    // wait for the slowest, not one round trip per replica. Empty when all succeeded; else
    // the replicas that failed (each is then broken or degraded by its own policy; the others
    // hold the range).
    [[nodiscard]] std::vector<ReplicaFailure> persist(std::size_t offset, std::size_t length,
                                                      unsigned lane, unsigned flags = 0) {
        std::vector<ReplicaFailure> failures;
        for (std::size_t i = 0; i < replicas_.size(); ++i)
            if (rpmem_persist(replicas_[i], offset, length, lane, flags) != 0)
                failures.push_back(failure_of(i));
        return failures;
    }

    // As persist(), and each target flushes to its deepest persistence domain.
    [[nodiscard]] std::vector<ReplicaFailure> deep_persist(std::size_t offset, std::size_t length,
                                                           unsigned lane) {
        std::vector<ReplicaFailure> failures;
        for (std::size_t i = 0; i < replicas_.size(); ++i)
            if (rpmem_deep_persist(replicas_[i], offset, length, lane) != 0)
                failures.push_back(failure_of(i));
        return failures;
    }

    // Closes every replica (the last first); the failures met, if any. Afterwards the group is
    // empty.
    std::vector<ReplicaFailure> close() noexcept {
        std::vector<ReplicaFailure> failures;
        for (std::size_t i = replicas_.size(); i-- > 0;)
            if (rpmem_close(replicas_[i]) != 0)
                failures.push_back(failure_of(i));
        replicas_.clear();
        return failures;
    }

private:
    explicit ReplicaGroup(std::vector<RPMEMpool*> replicas) noexcept
        : replicas_(std::move(replicas)) {}

    static ReplicaFailure failure_of(std::size_t index) {
        const int error = errno;
        const char* message = rpmem_errormsg();
        return {index, error, message != nullptr ? message : ""};
    }

    static ReplicaGroup start(bool create, std::span<const ReplicaTarget> targets, void* pool,
                              std::size_t size, unsigned& lanes, rpmem_pool_attr* attributes) {
        if (targets.empty())
            throw std::system_error(EINVAL, std::generic_category(),
                                    "rpmem::ReplicaGroup: no "
                                    "targets");
        ReplicaGroup group({});
        unsigned granted = lanes;
        for (const ReplicaTarget& replica : targets) {
            unsigned wanted = lanes;
            RPMEMpool* opened =
                create ? rpmem_create(replica.target.c_str(), replica.pool_set.c_str(), pool, size,
                                      &wanted, attributes)
                       : rpmem_open(replica.target.c_str(), replica.pool_set.c_str(), pool, size,
                                    &wanted, group.replicas_.empty() ? attributes : nullptr);
            if (opened == nullptr) {
                const int error = errno;
                const std::string message = rpmem_errormsg();
                (void)group.close();
                throw std::system_error(error, std::generic_category(),
                                        (create ? "creating " : "opening ") + replica.pool_set +
                                            " on " + replica.target + ": " + message);
            }
            group.replicas_.push_back(opened);
            granted = std::min(granted, wanted);
        }
        lanes = granted;
        return group;
    }

    std::vector<RPMEMpool*> replicas_;
};

} // namespace rpmem

#endif // RPMEM_REPLICA_GROUP_H
