// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>
#include <mutex>
#include <string>

namespace rpmem::client {

// The sibling replicas of one local pool (libpmemobj's REPLICA lines of one pool set, opened in
// one process) and how many of them must stay in sync: min-in-sync-replicas. A replica that
// fails may go degraded, and the application's persist succeed on the local pool, only while
// that leaves at least the minimum of its siblings in sync; below it, the failure policy
// (RPMEM_ON_REPLICA_FAILURE) decides. The default minimum is all of them, PMDK's rule: any
// failure reaches the policy. Thread-safe; the counts change only when a replica opens, closes,
// fails or is back in sync, never on a healthy persist.
class SyncQuorum {
public:
    // `min_in_sync`: 0 for all the members.
    explicit SyncQuorum(unsigned min_in_sync) noexcept
        : min_in_sync_(min_in_sync) {}

    // One replica's place in the group, for as long as it lives.
    class Member {
    public:
        explicit Member(std::shared_ptr<SyncQuorum> quorum);
        ~Member();
        Member(const Member&) = delete;
        Member& operator=(const Member&) = delete;

        // This replica stops being in sync: true when it may (it already is out, `regardless`
        // is set, or enough siblings stay in sync), false when that would leave fewer than the
        // minimum in sync (the failure policy applies; the replica still counts as in sync).
        bool leave_sync(bool regardless);
        // Back in sync after a resync.
        void rejoin_sync();
        // "2 of 3 replicas in sync, at least 1 required", for messages.
        std::string describe() const;

    private:
        std::shared_ptr<SyncQuorum> quorum_;
        bool out_ = false; // guarded by quorum_->mutex_
    };

private:
    // The members that must stay in sync now; the mutex is held.
    unsigned required() const noexcept;

    const unsigned min_in_sync_;
    mutable std::mutex mutex_;
    unsigned members_ = 0;
    unsigned out_of_sync_ = 0;
};

} // namespace rpmem::client
