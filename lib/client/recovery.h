// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "client/dirty_extents.h"
#include "client/extent_digest.h"
#include "client/extent_locks.h"
#include "client/master_proof.h"
#include "client/sync_quorum.h"
#include "protocol/replica_state.h"
#include "protocol/request.h"

namespace rpmem::client {

// Where a replica stands with its initiator.
enum class SyncState {
    in_sync,   // every persist reaches it before the call returns
    degraded,  // lost (on-replica-failure = continue): persists are recorded, not sent
    resyncing, // reconnected: persists are sent again while the missed extents are copied
};

// The shape of a resync's copies (rpmem-bench resync reports it).
struct ResyncShape {
    // A copy: contiguous dirty extents, up to 1 MiB, RMA-written straight from the local pool
    // (in chunks of the provider's largest write). 64 KiB copies, from when copies went inline,
    // held a whole-pool resync to about half its rate.
    static constexpr std::size_t copy_extents = 256;
    // Copies go in batches: their stripes held together, their writes and flushes in flight
    // together over the lanes free at the time, one drain per lane. A batch holds up the
    // application's persists to its stripes until it is acknowledged, so it stays small: larger
    // batches measured no faster.
    static constexpr std::size_t batch_copies = 256;
    static constexpr std::size_t batch_bytes = 1 << 20;
};

// What Recovery needs of its replica, and nothing more: the local pool, the session's control
// channel and lanes as a few operations. client::Replica implements it; tests use a fake.
class RecoveryAccess {
public:
    virtual ~RecoveryAccess() = default;

    // The caller's whole local pool, and where its replicated data starts (4096 with headers).
    virtual std::span<const std::byte> local_pool() const = 0;
    virtual std::size_t data_start() const = 0;
    // "host:port pool set NAME", for messages.
    virtual std::string describe() const = 0;

    // Drops the session's connection once no lane uses it; flushes never drained on it are
    // missed: `missed` hears of each such range.
    virtual void retire_connection(const std::function<void(Range)>& missed) = 0;
    // A new session at `generation`, installed while no lane runs; `installed` is called under
    // the lanes' locks, so that the lanes see the connection and the state it sets together.
    virtual Result<void> reconnect(std::uint64_t generation,
                                   const std::function<void()>& installed) = 0;
    // Sends the local pool's bytes of `ranges` to the same offsets of the replica and waits for
    // their acknowledgement. The caller holds the ranges' stripes exclusively (ExtentLocks) from
    // before this reads the pool until it returns. Fails when the connection fails.
    virtual Result<void> copy(std::span<const Range> ranges) = 0;
    // The replica's digests of [offset, +length), as Replica::digests.
    virtual Result<std::vector<std::uint64_t>>
    remote_digests(std::size_t offset, std::size_t length, std::size_t extent_size,
                   const std::function<void(std::uint64_t)>& on_progress) = 0;
    // Reads the replica's bytes at `offset` into `into` (lane 0).
    virtual Result<void> read_remote(std::span<std::byte> into, std::size_t offset) = 0;
    // Tells the target how a copy goes (rpmemctl status, events); best effort.
    virtual void report(protocol::ResyncPhase phase, std::uint64_t done, std::uint64_t total) = 0;
};

// The recovery of one replica: the direction proof and consistency on open, the missed extents
// of degraded mode, reconnecting with backoff, the resync copy and its reports, and the state
// the data path reads (SyncState). Owned by its Replica, which it sees only through
// RecoveryAccess.
//
// Proven direction (DESIGN.md, invariant 7): nothing flows from the local pool onto the replica
// at open unless MasterProof says the local pool is its master at the same or a newer run. A
// resync after degraded mode copies only extents this session persisted (it opened the replica
// proven, or created it, or found it consistent), so its direction is that session's.
//
// Ordering: a persist holds its range's stripes shared from before it reads the pool until its
// acknowledgement, a copy holds them exclusively the same way, the stripes always before any
// lane lock: so a copy never lands older bytes over a newer persist (client/extent_locks.h).
//
// Thread contract: open_check() runs on the opening thread before any data-path call. The data
// path calls state(), locks(), mark_missed(), leave_sync() and degrade() from any lane's
// thread. The background thread (started by the first degrade) is joined by stop().
class Recovery {
public:
    struct Options {
        std::chrono::milliseconds first_backoff{100};
        std::chrono::milliseconds max_backoff{5000};
        std::chrono::seconds progress_interval{2};
    };

    Recovery(RecoveryAccess& replica, std::size_t pool_size, std::shared_ptr<SyncQuorum> quorum,
             Options options);
    Recovery(RecoveryAccess& replica, std::size_t pool_size, std::shared_ptr<SyncQuorum> quorum)
        : Recovery(replica, pool_size, std::move(quorum), Options{}) {}
    ~Recovery();
    Recovery(const Recovery&) = delete;
    Recovery& operator=(const Recovery&) = delete;

    // ---- open ----

    // What an open of the replica decided.
    struct OpenOutcome {
        MasterProof proof;
        // The session may vouch for the replica at close: it found it consistent, or proved the
        // local pool its master and brought it up to date. Otherwise close leaves the state the
        // replica was found in.
        bool vouched = false;
        std::uint64_t repaired_bytes = 0; // copied by consistency on open
    };
    // Consistency on open, for a replica opened in `found` state with `attributes`: proves the
    // direction (MasterProof; the replica's descriptor is read over the data path when needed),
    // refuses (ESTALE) a local pool older than the replica, and, when the replica is not
    // consistent, copies the extents whose digests differ, only from a proven master. An
    // unproven local pool leaves the replica untouched, with one warning naming why. Without
    // `bring_up_to_date` (an inspection: rpmemctl verify, restore) it only proves: nothing is
    // copied or refused, and the session does not vouch for the replica.
    Result<OpenOutcome> open_check(protocol::ReplicaState found, const PoolAttributes& attributes,
                                   bool bring_up_to_date);
    // The generation reconnects ask for: the target's, from the create or open reply.
    void set_generation(std::uint64_t generation) noexcept { generation_ = generation; }

    // ---- the data path ----

    SyncState state() const noexcept { return state_.load(std::memory_order_acquire); }
    ExtentLocks& locks() noexcept { return locks_; }
    // The replica missed [offset, +length) (degraded, or a flush not drained on a lost lane).
    void mark_missed(std::size_t offset, std::size_t length) noexcept {
        dirty_.mark(offset, length);
    }
    // Whether the replica may leave sync (min-in-sync-replicas; `regardless` under continue).
    bool leave_sync(bool regardless) { return quorum_member_.leave_sync(regardless); }
    std::string quorum_text() const { return quorum_member_.describe(); }
    // The replica missed [offset, +length) because `step` failed: degraded from now on, and the
    // background thread reconnects and resyncs.
    void degrade(const char* step, std::size_t offset, std::size_t length, const Error& why);

    // ---- observing, closing ----

    std::size_t dirty_extents() const noexcept { return dirty_.count(); }
    struct ResyncRecord {
        std::chrono::steady_clock::time_point began;
        std::chrono::steady_clock::time_point ended;
        std::uint64_t bytes = 0;
        std::uint64_t completed = 0;
    };
    ResyncRecord last_resync() const;
    // Waits up to `patience` for a resync under way to finish (so that a program ending soon
    // after its replica came back leaves it consistent), then stops and joins the thread.
    void stop(std::chrono::milliseconds patience);

private:
    // The background thread: reconnect, resync, back in sync; until stop.
    void run();
    // Marks the extents of the replicated range whose digests differ from the local pool's.
    void mark_differing_extents(const std::string& why);
    // Copies the dirty extents and returns the bytes sent; nothing when the replica failed
    // again (it is degraded then) or stop began.
    std::optional<std::uint64_t> copy_dirty(const char* why);
    bool stopping() const;

    RecoveryAccess& replica_;
    const Options options_;
    std::atomic<SyncState> state_{SyncState::in_sync};
    SyncQuorum::Member quorum_member_; // counted out of sync from degraded to back in sync
    DirtyExtents dirty_;
    ExtentLocks locks_;
    std::uint64_t generation_ = 0; // the session's, for reconnects (set by open_check's caller)

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false; // under mutex_
    std::thread thread_;    // started by the first degrade

    mutable std::mutex record_mutex_;
    ResyncRecord last_resync_; // under record_mutex_
};

} // namespace rpmem::client
