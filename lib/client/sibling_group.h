// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "client/sync_quorum.h"

namespace rpmem::client {

// The sibling replicas of one local pool (libpmemobj's REPLICA lines of one pool set, opened in
// one process): their SyncQuorum (min-in-sync-replicas), and the fan-out of their persists.
//
// Fan-out: libpmemobj persists a range to its replicas one after the other, each call with the
// same offset, length and lane, each waiting for its own round trip. So the first call of such a
// round posts the same persist ahead on every sibling that is in sync (FanOutMember::post_ahead),
// then waits for its own acknowledgement; the sibling's own call, when it comes, finds the persist
// posted and only waits for its replica's acknowledgement. N replicas cost about one round trip
// instead of N. What a posted-ahead persist may and may not do is Replica's business
// (client/replica.h); the group only knows who the siblings are.
//
// Thread-safe: posts (any thread, any lane) take a shared lock; members join and leave under an
// exclusive one, so a member is never posted to after its Membership ended.
class SiblingGroup {
public:
    // `min_in_sync`: as SyncQuorum; `fan_out`: whether persists are posted ahead at all.
    SiblingGroup(unsigned min_in_sync, bool fan_out);

    const std::shared_ptr<SyncQuorum>& quorum() const noexcept { return quorum_; }

    // What a member offers its siblings.
    class FanOutMember {
    public:
        // Posts a persist of [offset, +length) on `lane` without waiting, unless that would
        // block (the lane is busy), the member is not in sync, or the range does not fit one
        // message. True when posted. Never fails the member: its own call meets any error.
        virtual bool post_ahead(std::size_t offset, std::size_t length, unsigned lane) = 0;
        virtual ~FanOutMember() = default;
    };

    // A member's place in the fan-out, from join to destruction.
    class Membership {
    public:
        Membership(std::shared_ptr<SiblingGroup> group, FanOutMember& member);
        ~Membership();
        Membership(const Membership&) = delete;
        Membership& operator=(const Membership&) = delete;

        // Posts [offset, +length) on `lane` to every other member; returns how many took it.
        unsigned post_to_siblings(std::size_t offset, std::size_t length, unsigned lane) const;

    private:
        std::shared_ptr<SiblingGroup> group_;
        FanOutMember& member_;
    };

private:
    const std::shared_ptr<SyncQuorum> quorum_;
    const bool fan_out_;
    mutable std::shared_mutex mutex_;
    std::vector<FanOutMember*> members_; // under mutex_
};

} // namespace rpmem::client
