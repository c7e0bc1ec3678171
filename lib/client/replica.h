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
#include "client/ordered_stream.h"
#include "client/posted_ahead.h"
#include "client/recovery.h"
#include "client/replica_session.h"
#include "client/session_usage.h"
#include "client/settings.h"
#include "client/sibling_group.h"
#include "protocol/replica_state.h"
#include "protocol/request.h"

namespace rpmem::client {

class LaneSet;

// How rpmem_persist() may reach durability.
enum class PersistMode {
    strict,  // every aligned 8-byte word lands whole (libpmemobj relies on it)
    relaxed, // RPMEM_PERSIST_RELAXED: plain writes allowed
};

// One remote replica of a local pool: the TLS control channel to rpmemd, the session it opened,
// and the lanes (fabric endpoints) persists travel on. Made by create() or open(); close() ends
// the session (the destructor closes too, logging instead of reporting). The lanes are declared
// after the control channel, so they close first.
//
// Opening a replica that rpmemd does not call consistent brings it up to date from the local
// pool before open returns, but only when the local pool is proven to be its master
// (client/recovery.h, client/master_proof.h); otherwise it is left as it is. An open whose local
// pool is older than the replica is refused.
//
// Failures of the data path follow Settings::on_replica_failure. error and abort: the replica
// is broken and every later data-path call fails with the same errno (sticky errors; abort is
// the C ABI's business). continue: the call succeeds (the local pool is durable already), the
// replica goes degraded and Recovery records what it misses, reconnects, resyncs and returns it
// to in_sync.
//
// Thread contract: lanes are the caller's, as in PMDK. Operations on different lanes may run
// concurrently; one lane must not be used by two threads at once. create/open/close/set_attr
// must not race with each other or with data-path calls. Each lane has a mutex of its own,
// uncontended unless Recovery swaps the connection or borrows lanes for a copy.
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
//
// Asynchronous replication (Settings::replication, client/ordered_stream.h): while the replica
// is in sync, persists, deep persists and flushes are queued on its OrderedStream, in one order,
// and return once queued within the lag bounds; a drain waits for the bounds. Out of sync they
// take the synchronous path above. No sibling posts ahead on an asynchronous replica: that
// would put a persist on the replica out of the stream's order.
class Replica : private SiblingGroup::FanOutMember, private RecoveryAccess, private StreamLane {
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
    // rpmemd does not call consistent is brought up to date first from a proven master (its
    // extents whose digests differ from the local pool's are copied). ESTALE when the local
    // pool is older than the replica (client/master_proof.h). `bring_up_to_date` false: an
    // inspection (rpmemctl verify, restore): nothing copied or refused; master_proof() tells
    // what the local pool is, and close() leaves the replica's state unless mark_identical().
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
    std::string describe() const override;
    SyncState sync_state() const noexcept { return recovery_.state(); }
    // Extents the replica misses now (degraded or resyncing).
    std::size_t dirty_extents() const noexcept { return recovery_.dirty_extents(); }
    std::uint64_t generation() const noexcept { return generation_; }
    // What open found of the local pool's claim to be this replica's master (create: proven).
    const MasterProof& master_proof() const noexcept { return proof_; }
    // The state rpmemd had recorded for the replica when this session opened it.
    protocol::ReplicaState found_state() const noexcept { return found_state_; }
    // The last resync after a reconnect that brought the replica back in sync, for benchmarks.
    using ResyncRecord = Recovery::ResyncRecord;
    ResyncRecord last_resync() const { return recovery_.last_resync(); }

    // The data path. Each call checks its lane and range here, once (the initiator's one
    // check: the lanes below trust them), then runs on the lane.
    Result<void> persist(std::size_t offset, std::size_t length, unsigned lane, PersistMode mode);
    // As persist(), and the target flushes to its deepest domain (msync off pmem).
    Result<void> deep_persist(std::size_t offset, std::size_t length, unsigned lane);
    // Starts a persist; durable after the next drain() on the same lane.
    Result<void> flush(std::size_t offset, std::size_t length, unsigned lane, PersistMode mode);
    Result<void> drain(unsigned lane);
    Result<void> read(std::span<std::byte> into, std::size_t offset, unsigned lane);
    // Waits until the replica holds everything persisted so far (asynchronous mode; at once in
    // synchronous mode): the barrier before an external side effect. ETIMEDOUT after `timeout`.
    Result<void> wait_replicated(std::chrono::milliseconds timeout);
    bool asynchronous() const noexcept { return stream_ != nullptr; }
    // The asynchronous replica's lag now and its high-water marks (zero when synchronous).
    ReplicationLag replication_lag() const;

    Result<void> set_attributes(const PoolAttributes& attributes);
    // The caller found the replica to differ from the local pool and left it so: close()
    // then leaves it outdated instead of consistent.
    void mark_behind() noexcept { behind_ = true; }
    // The caller compared the replica with the local pool and found them identical (rpmemctl
    // verify), or made them so (rpmemctl restore): close() then records the replica consistent.
    void mark_identical() noexcept { vouched_ = true; }
    // What the session has carried so far (every lane's counters, each read under its lane's
    // mutex).
    SessionUsage usage() const;
    // Ends the session; afterwards only destruction is allowed. Reports the first error met but
    // always tears everything down. The target records the replica consistent only when it is
    // in sync now and this session may vouch for it (it created it, found it consistent, or
    // brought it up to date from a proven master); a session that could not vouch leaves the
    // state the replica was found in.
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
    using Connection = ReplicaSession;
    // A lane's mutex and what it guards: the range flushed since its last drain, the fan-out's
    // claim, and what the lane carried (plain counters: written under the mutex).
    struct alignas(64) LaneGuard {
        std::mutex mutex;
        std::size_t pending_begin = 0;
        std::size_t pending_end = 0;
        PostedAhead ahead;
        UsageCounters usage;

        // Widens the pending range to cover [offset, +length).
        void add_pending(std::size_t offset, std::size_t length) noexcept;
        // The pending range, emptied.
        Range take_pending() noexcept;
    };

    Replica(const Settings& settings, const Target& target, std::string_view pool_set,
            std::span<std::byte> pool, std::shared_ptr<SiblingGroup> siblings);
    static Result<std::unique_ptr<Replica>>
    start(bool create, const Settings& settings, const Target& target, std::string_view pool_set,
          std::span<std::byte> pool, unsigned& lanes, const PoolAttributes* create_attributes,
          PoolAttributes* open_attributes, bool bring_up_to_date,
          std::shared_ptr<SiblingGroup> siblings);
    Result<void> establish(bool create, unsigned& lanes, const PoolAttributes* create_attributes,
                           PoolAttributes* open_attributes, bool bring_up_to_date);
    // A new session (client/replica_session.h) at `expected_generation` (open; 0: any), whose
    // generation and header layout become the replica's.
    Result<std::unique_ptr<Connection>> connect(bool create, unsigned lanes,
                                                const PoolAttributes* create_attributes,
                                                std::uint64_t expected_generation);
    Result<void> check_lane(const char* step, unsigned lane) const;
    Result<void> check_write(const char* step, std::size_t offset, std::size_t length,
                             unsigned lane) const;
    Result<void> check_broken() const;
    // Runs `send` on the lane under its mutex (and the stripes of [offset, +length), all of the
    // pool for a drain, while resyncing); while degraded only records what the call misses.
    // A failure meets the failure policy.
    template <typename Send>
    Result<void> on_lane(const char* step, unsigned lane, std::size_t offset, std::size_t length,
                         Send&& send);
    // SiblingGroup::FanOutMember: a sibling's persist of the same range, posted on our lane.
    bool post_ahead(std::size_t offset, std::size_t length, unsigned lane) override;
    // Data-path errors break the replica for good (PMDK's sticky errors).
    Result<void> sticky(Result<void> result);
    // Logs what the session carried and appends its record to the usage file, if any.
    void report_usage();

    // RecoveryAccess
    std::span<const std::byte> local_pool() const override { return pool_; }
    std::size_t data_start() const override { return data_start_; }
    void retire_connection(const std::function<void(Range)>& missed) override;
    Result<void> reconnect(std::uint64_t generation,
                           const std::function<void()>& installed) override;
    Result<void> copy(std::span<const Range> ranges) override;
    Result<std::vector<std::uint64_t>>
    remote_digests(std::size_t offset, std::size_t length, std::size_t extent_size,
                   const std::function<void(std::uint64_t)>& on_progress) override {
        return digests(offset, length, extent_size, on_progress);
    }
    // Lane 0, in any state but disconnected (consistency on open reads while resyncing).
    Result<void> read_remote(std::span<std::byte> into, std::size_t offset) override;
    void report(protocol::ResyncPhase phase, std::uint64_t done, std::uint64_t total) override;

    // StreamLane: lane 0 carries the stream.
    bool with_stream_lane(const std::function<void(RecordLane&)>& round) override;
    void stream_broken(const Error& why) override;
    // The lanes to ask the target for when the application wants `lanes`.
    unsigned lanes_with_stream(unsigned lanes) const noexcept;
    // After the connection came up with connected_lanes_: the stream on the last lane, when
    // asked for and the target can apply ordered records; sets lane_count_.
    void start_stream();
    // Queues the call on the stream: the call's result when it went there, nothing when the
    // caller is to take the synchronous path (synchronous mode, or out of sync).
    std::optional<Result<void>> queue_async(std::size_t offset, std::size_t length,
                                            OrderedStream::Call call);
    // Close's first step: waits up to RPMEM_TIMEOUT for the replica to hold every persist, then
    // stops the stream; what it never acknowledged leaves the replica outdated (ETIMEDOUT).
    Result<void> stop_stream();

    Settings settings_;
    Target target_;
    std::string where_; // "host:port" of the control channel, for messages
    std::string pool_set_;
    std::span<std::byte> pool_;
    std::size_t data_start_ = 0; // 4096 when the pool has headers (the target owns them)
    bool closed_ = false;
    bool behind_ = false;          // mark_behind()
    bool vouched_ = false;         // this session may call the replica consistent (see close())
    unsigned lane_count_ = 0;      // the application's lanes
    unsigned connected_lanes_ = 0; // on the connection: one more in asynchronous mode
    std::uint64_t generation_ = 0;
    protocol::ReplicaState found_state_ = protocol::ReplicaState::consistent;
    MasterProof proof_;

    std::atomic<bool> broken_{false};
    mutable std::mutex broken_mutex_;
    std::optional<Error> broken_error_;

    std::shared_ptr<SiblingGroup> siblings_;
    // In the fan-out from a successful create/open until close (or destruction).
    std::optional<SiblingGroup::Membership> fan_out_;
    std::unique_ptr<Connection> connection_; // null while degraded and disconnected
    std::unique_ptr<LaneGuard[]> guards_;    // connected_lanes_ of them
    Recovery recovery_;                      // its thread stops before the rest goes
    std::unique_ptr<OrderedStream> stream_;  // asynchronous mode; last: it stops first
};

} // namespace rpmem::client
