// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "base/target.h"
#include "client/control.h"
#include "client/dirty_extents.h"
#include "client/extent_locks.h"
#include "client/progress_meter.h"
#include "client/settings.h"
#include "client/sibling_group.h"
#include "client/sync_quorum.h"
#include "protocol/replica_state.h"
#include "protocol/request.h"

namespace rpmem::channel {
class Client;
}

namespace rpmem::client {

class LaneSet;

// How rpmem_persist() may reach durability.
enum class PersistMode {
    strict,  // every aligned 8-byte word lands whole (libpmemobj relies on it)
    relaxed, // RPMEM_PERSIST_RELAXED: plain writes allowed
};

// Where a replica stands with its initiator.
enum class SyncState {
    in_sync,   // every persist reaches it before the call returns
    degraded,  // lost (on-replica-failure = continue): persists are recorded, not sent
    resyncing, // reconnected: persists are sent again while the missed extents are copied
};

// One remote replica of a local pool: the TLS control channel to rpmemd, the session it opened,
// and the lanes (fabric endpoints) persists travel on. Made by create() or open(); close() ends
// the session (the destructor closes too, logging instead of reporting). The lanes are declared
// after the control channel, so they close first.
//
// Opening a replica that rpmemd does not call consistent (a session ended uncleanly, or its
// initiator went on without it) brings it up to date from the local pool before open returns.
//
// Failures of the data path follow Settings::on_replica_failure. error and abort: the replica
// is broken and every later data-path call fails with the same errno (sticky errors; abort is
// the C ABI's business). continue: the call succeeds (the local pool is durable already), the
// replica goes degraded and records what it misses in DirtyExtents; a background thread
// reconnects with bounded backoff, copies the missed extents from the local pool while new
// persists replicate again (ExtentLocks orders the two), and returns the replica to in_sync.
//
// Thread contract: lanes are the caller's, as in PMDK. Operations on different lanes may run
// concurrently; one lane must not be used by two threads at once. create/open/close/set_attr
// must not race with each other or with data-path calls. Each lane has a mutex of its own,
// uncontended unless the background thread swaps the connection or borrows lane 0 for a copy.
//
// Fan-out (client/sibling_group.h): a persist on lane L also posts the same range, inline, on
// lane L of each sibling that is in sync, when that lane is free (try_lock: a sibling's lane is
// never used by two threads at once, and no two replicas' lane mutexes are ever waited for in
// turn, so no lock order between siblings exists). The sibling's own persist of the same range
// on lane L then finds it posted and only drains its lane. Why that never acknowledges early:
//  - it still waits, on its own lane, for its own target's acknowledgement of every message sent
//    on the lane (drain), the posted one included: 0 means this replica acknowledged;
//  - the posted message carries the bytes the range held when it was posted; it is used only if
//    the range still holds exactly those bytes (compared) and went on the connection the lane
//    has now (a reconnect drops it); otherwise the call sends the range again itself;
//  - it is posted only while the sibling is in sync, under the sibling's lane mutex, in the
//    lane's message order, and counted as pending on the lane: if the sibling degrades before
//    its own call, the range is a missed extent (as an undrained flush is), and its own call
//    applies its own failure policy (sticky error, abort, or degraded) as it always did;
//  - a failed post changes nothing the sibling's own call relies on: that call persists anew.
// A posted persist that no call of the sibling ever claims is an early, harmless copy of bytes
// the local pool holds.
class Replica : private SiblingGroup::FanOutMember {
public:
    // Creates the pool described by `pool_set` on `target` and connects `*lanes` lanes at most
    // (in: wanted, out: granted). Without attributes (nullptr or all zero) the remote pool has
    // no headers; with them, offsets below 4096 are the header and not writable.
    // `siblings`: the group of the other replicas of the same local pool (min-in-sync-replicas
    // and fan-out, client/sibling_group.h); null for a replica of its own.
    static Result<std::unique_ptr<Replica>>
    create(const Settings& settings, const Target& target, std::string_view pool_set,
           std::span<std::byte> pool, unsigned& lanes, const PoolAttributes* attributes,
           std::shared_ptr<SiblingGroup> siblings = nullptr);
    // Opens the existing pool; `attributes` (when not null) receives the stored ones. A replica
    // rpmemd does not call consistent is brought up to date first (its extents whose digests
    // differ from the local pool's are copied), unless `bring_up_to_date` is false (an
    // inspection, such as rpmemctl verify).
    static Result<std::unique_ptr<Replica>>
    open(const Settings& settings, const Target& target, std::string_view pool_set,
         std::span<std::byte> pool, unsigned& lanes, PoolAttributes* attributes,
         bool bring_up_to_date = true, std::shared_ptr<SiblingGroup> siblings = nullptr);

    ~Replica() override;
    Replica(const Replica&) = delete;
    Replica& operator=(const Replica&) = delete;

    unsigned lane_count() const noexcept { return lane_count_; }
    const Settings& settings() const noexcept { return settings_; }
    FailurePolicy failure_policy() const noexcept { return settings_.on_replica_failure; }
    // "host:port pool set NAME", for messages naming this replica.
    std::string describe() const;
    SyncState sync_state() const noexcept { return sync_.load(std::memory_order_acquire); }
    // Extents the replica misses now (degraded or resyncing).
    std::size_t dirty_extents() const noexcept { return dirty_.count(); }
    std::uint64_t generation() const noexcept { return generation_; }
    // The last resync after a reconnect that brought the replica back in sync, for benchmarks:
    // from the new session's install (resyncing) to in_sync, the bytes it copied, and how many
    // such resyncs completed so far (0: none yet; the other fields are then empty).
    struct ResyncRecord {
        std::chrono::steady_clock::time_point began;
        std::chrono::steady_clock::time_point ended;
        std::uint64_t bytes = 0;
        std::uint64_t completed = 0;
    };
    ResyncRecord last_resync() const;

    // The data path. Each call checks its lane and range here, once (the initiator's one
    // check: the lanes below trust them), then runs on the lane.
    Result<void> persist(std::size_t offset, std::size_t length, unsigned lane, PersistMode mode);
    // As persist(), and the target flushes to its deepest domain (msync off pmem).
    Result<void> deep_persist(std::size_t offset, std::size_t length, unsigned lane);
    // Starts a persist; durable after the next drain() on the same lane.
    Result<void> flush(std::size_t offset, std::size_t length, unsigned lane, PersistMode mode);
    Result<void> drain(unsigned lane);
    Result<void> read(std::span<std::byte> into, std::size_t offset, unsigned lane);

    Result<void> set_attributes(const PoolAttributes& attributes);
    // The caller found the replica to differ from the local pool and left it so: close()
    // then leaves it outdated instead of consistent.
    void mark_behind() noexcept { behind_ = true; }
    // Ends the session; afterwards only destruction is allowed. Reports the first error met but
    // always tears everything down. The target records the replica consistent only when it is
    // in sync now.
    Result<void> close();

    // The digests of [offset, offset + length) of the remote pool, one per extent of
    // `extent_size` bytes (a power of two from 4 KiB to 64 MiB; the last extent may be short),
    // as protocol::extent_digests computes them; asked over the control channel in as many
    // DigestRequests as the protocol's limits need. The target refuses ranges outside its pool
    // or inside its header. `on_progress` hears of the bytes each answered request covered.
    Result<std::vector<std::uint64_t>>
    digests(std::size_t offset, std::size_t length, std::size_t extent_size,
            const std::function<void(std::uint64_t bytes)>& on_progress = {});

private:
    // One session's channel and lanes; replaced whole when a degraded replica reconnects.
    struct Connection {
        std::atomic<bool> channel_failed{false}; // set by the channel, read by the lanes
        std::unique_ptr<channel::Client> control;
        std::unique_ptr<LaneSet> lanes; // after control: closes first
        ~Connection();
    };
    // A persist a sibling posted ahead on a lane (fan-out): its range, the connection it went
    // on, and the bytes it carried.
    struct PostedAhead {
        bool valid = false;
        const Connection* on = nullptr;
        std::size_t offset = 0;
        std::vector<std::byte> bytes;
    };
    // A lane's mutex and the range it flushed since its last drain (under the mutex).
    struct alignas(64) LaneGuard {
        std::mutex mutex;
        std::size_t pending_begin = 0;
        std::size_t pending_end = 0;
        PostedAhead ahead;

        // Widens the pending range to cover [offset, +length).
        void add_pending(std::size_t offset, std::size_t length) noexcept {
            if (pending_begin == pending_end) {
                pending_begin = offset;
                pending_end = offset + length;
            } else {
                pending_begin = std::min(pending_begin, offset);
                pending_end = std::max(pending_end, offset + length);
            }
        }
    };
    // What one lane carried. Written under its LaneGuard, so plain counters suffice.
    struct alignas(64) LaneUsage {
        std::uint64_t persists = 0;
        std::uint64_t deep_persists = 0;
        std::uint64_t flushes = 0;
        std::uint64_t drains = 0;
        std::uint64_t reads = 0;
        std::uint64_t bytes = 0;
        std::uint64_t posted_ahead = 0; // persists a sibling's call had posted (fan-out)
    };
    enum class Call { persist, deep_persist, flush, drain };

    Replica(const Settings& settings, const Target& target, std::string_view pool_set,
            std::span<std::byte> pool, std::shared_ptr<SiblingGroup> siblings);
    static Result<std::unique_ptr<Replica>>
    start(bool create, const Settings& settings, const Target& target, std::string_view pool_set,
          std::span<std::byte> pool, unsigned& lanes, const PoolAttributes* create_attributes,
          PoolAttributes* open_attributes, bool bring_up_to_date,
          std::shared_ptr<SiblingGroup> siblings);
    Result<void> establish(bool create, unsigned& lanes, const PoolAttributes* create_attributes,
                           PoolAttributes* open_attributes, bool bring_up_to_date);
    // Consistency on open: marks the extents whose digests differ from the local pool's.
    void mark_differing_extents(const std::string& why);
    // A new session: the channel, create or open, the lanes. `expected_generation` (open only):
    // what the target must be at; 0: any.
    Result<std::unique_ptr<Connection>> connect(bool create, unsigned lanes,
                                                const PoolAttributes* create_attributes,
                                                PoolAttributes* open_attributes,
                                                std::uint64_t expected_generation);
    Result<void> check_lane(const char* step, unsigned lane) const;
    Result<void> check_write(const char* step, std::size_t offset, std::size_t length,
                             unsigned lane) const;
    Result<void> check_broken() const;
    // Runs one data-path call on its lane under the failure policy.
    Result<void> on_lane(Call call, std::size_t offset, std::size_t length, unsigned lane,
                         PersistMode mode);
    // Whether a persist a sibling posted on this lane stands for this call's; spends it.
    bool claim_posted_ahead(LaneGuard& guard, std::size_t offset, std::size_t length);
    // SiblingGroup::FanOutMember: a sibling's persist of the same range, posted on our lane.
    bool post_ahead(std::size_t offset, std::size_t length, unsigned lane) override;
    // Data-path errors break the replica for good (PMDK's sticky errors).
    Result<void> sticky(Result<void> result);
    // continue: the replica missed [offset, +length) because of `why`.
    void degrade(const char* step, std::size_t offset, std::size_t length, const Error& why);
    // The background thread: reconnect, resync, back in sync; until close.
    void recover();
    void retire_connection();
    // Copies the dirty extents from the local pool on lane 0 and returns the bytes sent;
    // nothing when the replica failed again (it is degraded then) or close began.
    std::optional<std::uint64_t> copy_dirty(const char* why);
    // Tells the target how the copy goes (rpmemctl status shows it, events list it).
    void report_resync(protocol::ResyncPhase phase, const ProgressMeter& progress);
    void log_usage() const;

    Settings settings_;
    Target target_;
    std::string where_; // "host:port" of the control channel, for messages
    std::string pool_set_;
    std::span<std::byte> pool_;
    std::size_t data_start_ = 0; // 4096 when the pool has headers (the target owns them)
    bool created_ = false;
    bool closed_ = false;
    bool behind_ = false; // mark_behind()
    unsigned lane_count_ = 0;
    std::uint64_t generation_ = 0;
    protocol::ReplicaState found_state_ = protocol::ReplicaState::consistent;

    std::atomic<bool> broken_{false};
    mutable std::mutex broken_mutex_;
    std::optional<Error> broken_error_;

    std::atomic<SyncState> sync_{SyncState::in_sync};
    std::shared_ptr<SiblingGroup> siblings_;
    SyncQuorum::Member quorum_member_; // counted out of sync from degraded to back in sync
    // In the fan-out from a successful create/open until close (or destruction).
    std::optional<SiblingGroup::Membership> fan_out_;
    DirtyExtents dirty_;
    ExtentLocks extent_locks_;
    std::unique_ptr<Connection> connection_; // null while degraded and disconnected
    std::unique_ptr<LaneGuard[]> guards_;    // lane_count_ of them
    std::vector<LaneUsage> usage_;

    std::mutex recovery_mutex_;
    std::condition_variable recovery_wake_;
    bool stopping_ = false; // under recovery_mutex_
    std::thread recovery_;  // started by the first degrade

    mutable std::mutex resync_record_mutex_;
    ResyncRecord last_resync_; // under resync_record_mutex_
};

} // namespace rpmem::client
