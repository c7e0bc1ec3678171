// SPDX-License-Identifier: BSD-3-Clause
#include "client/replica.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "channel/client.h"
#include "client/extent_digest.h"
#include "client/lane_set.h"
#include "client/logger.h"
#include "protocol/request.h"

namespace rpmem::client {

namespace {

constexpr std::size_t kPoolHeaderSize = 4096; // offsets below it hold the pool header
constexpr unsigned kMaxDefaultLanes = 16;
// A resync copy: contiguous dirty extents up to one inline message's worth at a time.
constexpr std::size_t kCopyExtents = 16;
// Copies go in batches: their stripes held together, their messages in flight together over
// the lanes free at the time, one drain per lane. One round trip per copy made a resync of
// scattered 4 KiB extents run at a hundredth of the fabric's bandwidth.
constexpr std::size_t kBatchCopies = 32;
constexpr std::size_t kBatchBytes = 1 << 20;
// How often a long copy logs its progress and reports it to the target.
constexpr std::chrono::seconds kProgressInterval{2};
constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};

// The lanes asked for: the caller's wish, capped by RPMEM_MAX_NLANES or, by default, by the
// cores of this machine (a lane per core keeps every core busy; more only queue).
unsigned lanes_to_request(unsigned wanted, const Settings& settings) {
    unsigned cap = settings.max_lanes;
    if (cap == 0)
        cap = std::clamp(std::thread::hardware_concurrency(), 1U, kMaxDefaultLanes);
    return std::max(1U, std::min(wanted, cap));
}

protocol::ProviderPreference provider_preference(const Settings& settings) {
    if (auto named = protocol::provider_preference_from_name(settings.provider))
        return *named;
    return settings.enable_verbs ? protocol::ProviderPreference::any
                                 : protocol::ProviderPreference::tcp;
}

#ifdef RPMEM_FAILPOINTS
// Test builds only (meson -Dfailpoints=true): RPMEM_FAILPOINT=skip-resync-extent makes every
// other resync copy (the first included) claim success without sending anything, so that the fault
// tests can prove their byte comparison catches a replica that missed an extent. Read once at load.
const bool skip_resync_extent = [] {
    const char* value = std::getenv("RPMEM_FAILPOINT");
    return value != nullptr && std::string_view(value) == "skip-resync-extent";
}();
std::atomic<std::uint64_t> resync_copies{0};
#endif

const char* step_name(int call) {
    static constexpr const char* kNames[] = {"rpmem_persist", "rpmem_deep_persist", "rpmem_flush",
                                             "rpmem_drain"};
    return kNames[call];
}

} // namespace

Replica::Connection::~Connection() {
    lanes.reset();
    if (control)
        control->close();
}

Replica::Replica(const Settings& settings, const Target& target, std::string_view pool_set,
                 std::span<std::byte> pool, std::shared_ptr<SiblingGroup> siblings)
    : settings_(settings)
    , target_(target)
    , where_(fmt::format("{}:{}", target.host, target.port.value_or(kDefaultPort)))
    , pool_set_(pool_set)
    , pool_(pool)
    , siblings_(siblings ? std::move(siblings)
                         : std::make_shared<SiblingGroup>(settings.min_in_sync_replicas, false))
    , quorum_member_(siblings_->quorum())
    , dirty_(pool.size()) {}

Replica::~Replica() {
    if (!closed_)
        (void)close();
}

std::string Replica::describe() const {
    return fmt::format("{} pool set {}", where_, pool_set_);
}

Result<void> Replica::check_lane(const char* step, unsigned lane) const {
    if (lane >= lane_count())
        return fail(EINVAL, fmt::format("{}: lane {} is not one of the {} lanes", step, lane,
                                        lane_count()));
    return {};
}

Result<void> Replica::check_write(const char* step, std::size_t offset, std::size_t length,
                                  unsigned lane) const {
    if (auto bad = check_lane(step, lane); !bad)
        return bad;
    if (offset >= pool_.size() || length > pool_.size() - offset)
        return fail(EINVAL, fmt::format("{}: range [{}, +{}) is outside the pool of {} bytes", step,
                                        offset, length, pool_.size()));
    if (offset < data_start_)
        return fail(EINVAL, fmt::format("{}: offset {} is inside the pool header (the "
                                        "first {} bytes)",
                                        step, offset, kPoolHeaderSize));
    return check_broken();
}

Result<void> Replica::check_broken() const {
    if (!broken_.load(std::memory_order_acquire))
        return {};
    const std::lock_guard lock(broken_mutex_);
    return fail(*broken_error_);
}

Result<void> Replica::sticky(Result<void> result) {
    if (result)
        return result;
    const std::lock_guard lock(broken_mutex_);
    if (!broken_error_) {
        broken_error_ = result.error();
        logger().error("{}: pool set {} is broken: {} ({})", where_, pool_set_,
                       broken_error_->message(), std::strerror(broken_error_->errno_value()));
    }
    broken_.store(true, std::memory_order_release);
    return fail(*broken_error_);
}

// The one path of every data-path write call. The lane's mutex is taken after the extent
// stripes (the order the resync thread takes them in too), and the state read again under it:
// while degraded a call only records its range; while resyncing it holds its stripes.
Result<void> Replica::on_lane(Call call, std::size_t offset, std::size_t length, unsigned lane,
                              PersistMode mode) {
    LaneGuard& guard = guards_[lane];
    const bool relaxed = mode == PersistMode::relaxed;
    const std::size_t stripe_length = call == Call::drain ? 0 : length;
    for (;;) {
        std::optional<ExtentLocks::Hold> stripes;
        if (sync_.load(std::memory_order_acquire) == SyncState::resyncing)
            stripes.emplace(
                extent_locks_,
                ExtentLocks::stripes_of(call == Call::drain ? 0 : offset,
                                        call == Call::drain ? pool_.size() : stripe_length,
                                        DirtyExtents::kExtentSize),
                false);
        std::unique_lock lock(guard.mutex);
        const SyncState state = sync_.load(std::memory_order_acquire);
        if (state == SyncState::resyncing && !stripes)
            continue; // the resync began meanwhile: take the stripes first
        if (state == SyncState::degraded) {
            if (call == Call::drain) {
                dirty_.mark(guard.pending_begin, guard.pending_end - guard.pending_begin);
                guard.pending_begin = guard.pending_end = 0;
            } else {
                dirty_.mark(offset, length);
            }
            return {};
        }

        persist::InitiatorLane& on = connection_->lanes->lane(lane);
        Result<void> result;
        LaneUsage& usage = usage_[lane];
        const bool claimed = call == Call::persist && claim_posted_ahead(guard, offset, length);
        switch (call) {
        case Call::persist:
            if (claimed) {
                // A sibling's call posted this very persist on this lane: wait for our own
                // target's acknowledgement of it (and of everything before it on the lane).
                result = on.drain();
                if (result)
                    ++usage.posted_ahead;
            } else {
                // Ours first, then the siblings' (each on its own lane, not waited for), then
                // the wait for ours: the round trips overlap.
                result = on.flush(offset, length, relaxed);
                if (result && fan_out_)
                    fan_out_->post_to_siblings(offset, length, lane);
                if (result)
                    result = on.drain();
            }
            if (result)
                ++usage.persists;
            break;
        case Call::deep_persist:
            result = on.deep_persist(offset, length);
            if (result)
                ++usage.deep_persists;
            break;
        case Call::flush:
            result = on.flush(offset, length, relaxed);
            if (result) {
                ++usage.flushes;
                guard.add_pending(offset, length);
            }
            break;
        case Call::drain:
            result = on.drain();
            if (result)
                ++usage.drains;
            break;
        }
        if (result) {
            usage.bytes += length;
            if (call != Call::flush) // a persist drains the lane too
                guard.pending_begin = guard.pending_end = 0;
            return result;
        }
        // Degraded, the application going on with its local pool: always under continue; under
        // error or abort only while enough sibling replicas stay in sync (min-in-sync-replicas).
        if (!quorum_member_.leave_sync(settings_.on_replica_failure ==
                                       FailurePolicy::continue_degraded))
            return sticky(std::move(result));
        // What this lane may not have delivered: this call's range and its pending flushes.
        if (guard.pending_begin != guard.pending_end)
            dirty_.mark(guard.pending_begin, guard.pending_end - guard.pending_begin);
        guard.pending_begin = guard.pending_end = 0;
        degrade(step_name(static_cast<int>(call)), offset, call == Call::drain ? 0 : length,
                result.error());
        return {};
    }
}

// Under the lane's mutex: whether a persist of exactly [offset, +length) was posted ahead on
// this lane by a sibling and may stand for this call's own (see the class comment). The record
// is spent either way: a call that does not claim it persists anew, which drains it too.
bool Replica::claim_posted_ahead(LaneGuard& guard, std::size_t offset, std::size_t length) {
    PostedAhead& ahead = guard.ahead;
    if (!ahead.valid)
        return false;
    ahead.valid = false;
    return ahead.on == connection_.get() && ahead.offset == offset &&
           ahead.bytes.size() == length &&
           std::memcmp(ahead.bytes.data(), pool_.data() + offset, length) == 0;
}

bool Replica::post_ahead(std::size_t offset, std::size_t length, unsigned lane) {
    if (lane >= lane_count_ || length == 0 || offset < data_start_ || offset >= pool_.size() ||
        length > pool_.size() - offset || broken_.load(std::memory_order_acquire))
        return false;
    LaneGuard& guard = guards_[lane];
    const std::unique_lock lock(guard.mutex, std::try_to_lock);
    // Busy: its owner (a thread of the application, or the resync) goes on undisturbed, and
    // our own call persists the range when it comes.
    if (!lock.owns_lock())
        return false;
    if (sync_.load(std::memory_order_acquire) != SyncState::in_sync || !connection_)
        return false;
    persist::InitiatorLane& on = connection_->lanes->lane(lane);
    // One message, sent without waiting: a sibling's call never waits on this replica (a
    // stalled target, or posts nobody drained, cost it nothing).
    if (length > on.inline_size() || !on.can_send_now())
        return false;
    PostedAhead& ahead = guard.ahead;
    ahead.valid = false;
    const std::byte* bytes = pool_.data() + offset;
    ahead.bytes.assign(bytes, bytes + length);
    // Strict: an inline message is at least what a relaxed persist promises, and carries a
    // copy of the bytes made now (an RMA write would read them later).
    if (!on.flush(offset, length, false))
        return false; // our own call meets the failure and applies our policy
    // Pending like a flush: a connection dropped before our call marks the range missed.
    guard.add_pending(offset, length);
    // The range may have changed while it was copied (a racing writer): then the message
    // carries bytes no one can vouch for, and our own call sends the range again.
    if (std::memcmp(ahead.bytes.data(), bytes, length) != 0)
        return true;
    ahead.on = connection_.get();
    ahead.offset = offset;
    ahead.valid = true;
    return true;
}

void Replica::degrade(const char* step, std::size_t offset, std::size_t length, const Error& why) {
    dirty_.mark(offset, length);
    const SyncState was = sync_.exchange(SyncState::degraded, std::memory_order_acq_rel);
    if (was == SyncState::degraded)
        return;
    logger().warn("{}: replica degraded ({} failed: {}); the application goes on with its local "
                  "pool, the missed extents are recorded and copied once the replica is back ({})",
                  describe(), step, why.message(), quorum_member_.describe());
    const std::lock_guard lock(recovery_mutex_);
    if (!recovery_.joinable() && !stopping_)
        recovery_ = std::thread([this] { recover(); });
    recovery_wake_.notify_all();
}

// Makes sure no lane uses the connection, then drops it. Flushes never drained on it are
// missed extents.
void Replica::retire_connection() {
    std::vector<std::unique_lock<std::mutex>> held;
    held.reserve(lane_count_);
    for (unsigned l = 0; l < lane_count_; ++l) {
        held.emplace_back(guards_[l].mutex);
        LaneGuard& guard = guards_[l];
        if (guard.pending_begin != guard.pending_end)
            dirty_.mark(guard.pending_begin, guard.pending_end - guard.pending_begin);
        guard.pending_begin = guard.pending_end = 0;
        guard.ahead.valid = false; // posted on the connection that goes now
    }
    connection_.reset();
}

void Replica::report_resync(protocol::ResyncPhase phase, const ProgressMeter& progress) {
    // For rpmemctl status and events; the copy goes on whatever the answer.
    auto reported = connection_->control->call(
        protocol::ResyncReport{phase, progress.done_bytes(), progress.total_bytes()});
    if (!reported)
        logger().debug("{}: reporting the resync to the target: {}", describe(),
                       reported.error().message());
}

std::optional<std::uint64_t> Replica::copy_dirty(const char* why) {
    const std::size_t total = dirty_.count();
    logger().info("{}: {}: copying {} missed extents ({} bytes at most) from the local pool",
                  describe(), why, total, total * DirtyExtents::kExtentSize);
    // A log line and a report to the target every few seconds while it lasts, and at the end.
    ProgressMeter progress(fmt::format("{}: copying what the replica missed", describe()),
                           total * DirtyExtents::kExtentSize, kProgressInterval,
                           [this](const ProgressMeter& meter, const std::string& line, bool final) {
                               logger().info("{}", line);
                               report_resync(final ? protocol::ResyncPhase::finished
                                                   : protocol::ResyncPhase::progress,
                                             meter);
                           });
    report_resync(protocol::ResyncPhase::started, progress);
    auto failed = [&]() -> std::optional<std::uint64_t> {
        if (connection_)
            report_resync(protocol::ResyncPhase::failed, progress);
        return std::nullopt;
    };
    std::size_t position = 0;
    std::uint64_t copied = 0; // bytes sent
    std::vector<DirtyExtents::Extent> batch;
    std::vector<unsigned> lanes; // of the batch: lane 0, and the others free when it began
    for (;;) {
        {
            const std::lock_guard lock(recovery_mutex_);
            if (stopping_ && sync_.load() != SyncState::in_sync)
                return failed();
        }
        batch.clear();
        std::size_t batch_bytes = 0;
        std::uint64_t stripes = 0;
        while (batch.size() < kBatchCopies && batch_bytes < kBatchBytes) {
            auto run = dirty_.take_run(position, kCopyExtents);
            if (!run)
                break;
            position = run->offset + run->length;
            batch.push_back(*run);
            batch_bytes += run->length;
            stripes |= ExtentLocks::stripes_of(run->offset, run->length, DirtyExtents::kExtentSize);
        }
        if (batch.empty()) {
            progress.finish();
            return copied;
        }
        auto mark_batch = [&] {
            for (const DirtyExtents::Extent& run : batch)
                dirty_.mark(run.offset, run.length);
        };
        std::uint64_t sent_now = 0;
        {
            // Every copy's stripes from before the first reads the pool until the last drain.
            const ExtentLocks::Hold held(extent_locks_, stripes, true);
            std::vector<std::unique_lock<std::mutex>> locked;
            locked.emplace_back(guards_[0].mutex);
            if (sync_.load(std::memory_order_acquire) != SyncState::resyncing || !connection_) {
                mark_batch();
                return std::nullopt;
            }
            // Other lanes only when free now: the application's persists keep theirs.
            lanes.assign(1, 0);
            for (unsigned l = 1; l < connection_->lanes->size(); ++l) {
                std::unique_lock lane(guards_[l].mutex, std::try_to_lock);
                if (lane.owns_lock()) {
                    locked.push_back(std::move(lane));
                    lanes.push_back(l);
                }
            }
            Result<void> sent;
            for (std::size_t i = 0; i < batch.size() && sent; ++i) {
                // The data starts at data_start_: a header page is never dirty, but clip anyway.
                const std::size_t begin = std::max(batch[i].offset, data_start_);
                const std::size_t end = batch[i].offset + batch[i].length;
#ifdef RPMEM_FAILPOINTS
                if (skip_resync_extent && resync_copies.fetch_add(1) % 2 == 0)
                    continue; // the failpoint's lie: taken, never sent
#endif
                if (begin < end) {
                    sent = connection_->lanes->lane(lanes[i % lanes.size()])
                               .flush(begin, end - begin, false);
                    sent_now += end - begin;
                }
            }
            for (const unsigned l : lanes)
                if (sent)
                    sent = connection_->lanes->lane(l).drain();
            if (!sent) {
                mark_batch();
                if (sync_.exchange(SyncState::degraded) != SyncState::degraded)
                    logger().warn("{}: replica degraded again while copying ({})", describe(),
                                  sent.error().message());
                return std::nullopt; // the connection is gone: nothing to report to
            }
            copied += sent_now;
        }
        // Outside the locks: a report is a round trip on the control channel.
        progress.advance(sent_now);
    }
}

void Replica::recover() {
    std::chrono::milliseconds backoff = kFirstBackoff;
    std::size_t attempts = 0;
    std::unique_lock lock(recovery_mutex_);
    while (!stopping_) {
        if (sync_.load(std::memory_order_acquire) != SyncState::degraded) {
            recovery_wake_.wait(lock, [&] {
                return stopping_ || sync_.load(std::memory_order_acquire) == SyncState::degraded;
            });
            continue;
        }
        lock.unlock();
        retire_connection();
        ++attempts;
        auto reconnected = connect(false, lane_count_, nullptr, nullptr, generation_);
        if (reconnected && (*reconnected)->lanes->size() < lane_count_)
            reconnected = fail(EAGAIN, fmt::format("the target granted {} of the {} lanes",
                                                   (*reconnected)->lanes->size(), lane_count_));
        if (!reconnected) {
            (attempts == 1
                 ? logger().warn("{}: reconnecting failed: {}; retrying every {} ms "
                                 "at most",
                                 describe(), reconnected.error().message(), kMaxBackoff.count())
                 : logger().debug("{}: reconnecting (attempt {}) failed: {}", describe(), attempts,
                                  reconnected.error().message()));
            lock.lock();
            recovery_wake_.wait_for(lock, backoff, [&] { return stopping_; });
            backoff = std::min(backoff * 2, kMaxBackoff);
            continue;
        }
        {
            std::vector<std::unique_lock<std::mutex>> held;
            for (unsigned l = 0; l < lane_count_; ++l)
                held.emplace_back(guards_[l].mutex);
            connection_ = std::move(*reconnected);
            sync_.store(SyncState::resyncing, std::memory_order_release);
        }
        const auto began = std::chrono::steady_clock::now();
        logger().warn("{}: replica reconnected after {} attempts; resyncing {} missed extents "
                      "while persists replicate again",
                      describe(), attempts, dirty_.count());
        backoff = kFirstBackoff;
        attempts = 0;
        if (auto copied = copy_dirty("resync")) {
            SyncState expected = SyncState::resyncing;
            if (dirty_.empty() && sync_.compare_exchange_strong(expected, SyncState::in_sync,
                                                                std::memory_order_acq_rel)) {
                const auto ended = std::chrono::steady_clock::now();
                quorum_member_.rejoin_sync();
                logger().warn("{}: replica back in sync ({})", describe(),
                              quorum_member_.describe());
                const std::lock_guard record(resync_record_mutex_);
                last_resync_ = {began, ended, *copied, last_resync_.completed + 1};
            } else if (expected == SyncState::resyncing)
                sync_.store(SyncState::degraded); // marked meanwhile by a failure: go round
        }
        lock.lock();
    }
}

Replica::ResyncRecord Replica::last_resync() const {
    const std::lock_guard lock(resync_record_mutex_);
    return last_resync_;
}

Result<void> Replica::persist(std::size_t offset, std::size_t length, unsigned lane,
                              PersistMode mode) {
    if (auto bad = check_write("rpmem_persist", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    return on_lane(Call::persist, offset, length, lane, mode);
}

Result<void> Replica::deep_persist(std::size_t offset, std::size_t length, unsigned lane) {
    if (auto bad = check_write("rpmem_deep_persist", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    return on_lane(Call::deep_persist, offset, length, lane, PersistMode::strict);
}

Result<void> Replica::flush(std::size_t offset, std::size_t length, unsigned lane,
                            PersistMode mode) {
    if (auto bad = check_write("rpmem_flush", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    return on_lane(Call::flush, offset, length, lane, mode);
}

Result<void> Replica::drain(unsigned lane) {
    if (auto bad = check_lane("rpmem_drain", lane); !bad)
        return bad;
    if (auto broken = check_broken(); !broken)
        return broken;
    return on_lane(Call::drain, 0, 0, lane, PersistMode::strict);
}

Result<void> Replica::read(std::span<std::byte> into, std::size_t offset, unsigned lane) {
    if (auto bad = check_lane("rpmem_read", lane); !bad)
        return bad;
    if (offset > pool_.size() || into.size() > pool_.size() - offset)
        return fail(EINVAL, fmt::format("rpmem_read: range [{}, +{}) is outside the pool of "
                                        "{} bytes",
                                        offset, into.size(), pool_.size()));
    // The target registers only the pool's data for RMA, never its header (a hostile
    // initiator must not rewrite it); the attributes come with create and open instead.
    if (offset < data_start_ && !into.empty())
        return fail(EINVAL, fmt::format("rpmem_read: offset {} is inside the pool header (the "
                                        "first {} bytes), which the target does not expose; "
                                        "rpmem_open returns its attributes",
                                        offset, kPoolHeaderSize));
    if (auto broken = check_broken(); !broken)
        return broken;
    if (into.empty())
        return {};
    const std::lock_guard lock(guards_[lane].mutex);
    // A replica that is not in sync has nothing trustworthy to read.
    if (sync_.load(std::memory_order_acquire) != SyncState::in_sync)
        return fail(ENOTCONN, fmt::format("rpmem_read: {} is degraded ({} extents behind); "
                                          "read the local pool",
                                          describe(), dirty_.count()));
    auto result = sticky(connection_->lanes->lane(lane).read(into, offset));
    if (result) {
        ++usage_[lane].reads;
        usage_[lane].bytes += into.size();
    }
    return result;
}

Result<void> Replica::set_attributes(const PoolAttributes& attributes) {
    if (auto broken = check_broken(); !broken)
        return broken;
    if (!connection_)
        return fail(ENOTCONN, fmt::format("{}: setting the attributes: the replica is degraded "
                                          "and not connected",
                                          describe()));
    auto reply = channel::expect<protocol::SetAttrReply>(
        connection_->control->call(protocol::SetAttrRequest{attributes}),
        fmt::format("{}: setting the attributes of {}", where_, pool_set_));
    if (!reply)
        return fail(std::move(reply.error()));
    return {};
}

Result<std::unique_ptr<Replica::Connection>>
Replica::connect(bool create, unsigned lanes, const PoolAttributes* create_attributes,
                 PoolAttributes* open_attributes, std::uint64_t expected_generation) {
    auto connection = std::make_unique<Connection>();
    auto control =
        connect_control(settings_, target_, [flag = &connection->channel_failed](const Error&) {
            flag->store(true, std::memory_order_release);
        });
    if (!control)
        return fail(std::move(control.error()));
    connection->control = std::move(*control);
    channel::Client& channel = *connection->control;

    protocol::DataPath data_path;
    if (create) {
        protocol::CreateRequest request{.pool_set = pool_set_,
                                        .pool_size = pool_.size(),
                                        .lanes = lanes,
                                        .provider = provider_preference(settings_),
                                        .persist_method = settings_.method};
        if (create_attributes != nullptr)
            request.attributes = *create_attributes;
        auto reply = channel::expect<protocol::CreateReply>(
            channel.call(request), fmt::format("{}: creating pool set {}", where_, pool_set_));
        if (!reply)
            return fail(std::move(reply.error()));
        data_path = reply->data_path;
        generation_ = reply->generation;
        data_start_ =
            create_attributes != nullptr && !create_attributes->is_zero() ? kPoolHeaderSize : 0;
        created_ = true;
    } else {
        protocol::OpenRequest request{.pool_set = pool_set_,
                                      .pool_size = pool_.size(),
                                      .lanes = lanes,
                                      .provider = provider_preference(settings_),
                                      .persist_method = settings_.method,
                                      .expected_generation = expected_generation};
        auto reply = channel::expect<protocol::OpenReply>(
            channel.call(request), fmt::format("{}: opening pool set {}", where_, pool_set_));
        if (!reply)
            return fail(std::move(reply.error()));
        data_path = reply->data_path;
        data_start_ = reply->attributes.is_zero() ? 0 : kPoolHeaderSize;
        generation_ = reply->generation;
        if (expected_generation == 0)
            found_state_ = reply->state;
        if (open_attributes != nullptr)
            *open_attributes = reply->attributes;
    }

    auto connected =
        LaneSet::connect(data_path, channel.peer_address(), pool_, settings_,
                         std::min(lanes, data_path.lanes), &connection->channel_failed);
    if (!connected) {
        // Leave nothing behind: a pool this call created is removed again (PMDK did the same).
        (void)channel.call(protocol::CloseRequest{.remove = create, .untouched = !create});
        return fail(std::move(connected.error()));
    }
    connection->lanes = std::move(*connected);
    return connection;
}

Result<void> Replica::establish(bool create, unsigned& lanes,
                                const PoolAttributes* create_attributes,
                                PoolAttributes* open_attributes, bool bring_up_to_date) {
    auto connection =
        connect(create, lanes_to_request(lanes, settings_), create_attributes, open_attributes, 0);
    if (!connection) {
        closed_ = true;
        return fail(std::move(connection.error()));
    }
    connection_ = std::move(*connection);
    lane_count_ = connection_->lanes->size();
    lanes = lane_count_;
    guards_ = std::make_unique<LaneGuard[]>(lane_count_);
    usage_.resize(lane_count_);

    // Consistency on open: a copy rpmemd does not vouch for is brought up to date from the
    // local pool, the one copy known to be right, before anything reads or relies on it.
    if (!create && bring_up_to_date && found_state_ != protocol::ReplicaState::consistent) {
        sync_.store(SyncState::resyncing, std::memory_order_release);
        const std::string why = fmt::format("the replica was {}", protocol::name_of(found_state_));
        mark_differing_extents(why);
        if (!copy_dirty(why.c_str())) {
            (void)connection_->control->call(protocol::CloseRequest{});
            connection_.reset();
            closed_ = true;
            return fail(EIO, fmt::format("{}: bringing the {} replica up to date failed; it "
                                         "stays {}",
                                         describe(), protocol::name_of(found_state_),
                                         protocol::name_of(protocol::ReplicaState::outdated)));
        }
        sync_.store(SyncState::in_sync, std::memory_order_release);
        logger().info("{}: replica up to date", describe());
    }
    return {};
}

// Compares the digests of the replicated range, extent by extent, and marks the extents that
// differ; all of them when the target cannot say (then everything is copied).
void Replica::mark_differing_extents(const std::string& why) {
    const std::size_t length = pool_.size() - data_start_;
    const std::size_t extent = DirtyExtents::kExtentSize;
    // The local pool is hashed while the target hashes its copy: the two reads overlap, so a
    // cold pool costs about one read of it, not two in a row.
    auto hashing = std::async(std::launch::async,
                              [&] { return local_digests(pool_, data_start_, length, extent); });
    ProgressMeter progress(fmt::format("{}: comparing digests", describe()), length,
                           kProgressInterval,
                           [this](const ProgressMeter&, const std::string& line, bool final) {
                               if (!final)
                                   logger().info("{}", line);
                           });
    auto remote =
        digests(data_start_, length, extent, [&](std::uint64_t bytes) { progress.advance(bytes); });
    auto local = hashing.get();
    if (!remote || !local) {
        logger().warn("{}: {}; comparing digests failed ({}): copying the whole pool", describe(),
                      why, (!remote ? remote.error() : local.error()).message());
        dirty_.mark(data_start_, length);
        return;
    }
    std::size_t bytes = 0;
    for (const Range& range : differing_ranges(*local, *remote, {data_start_, length}, extent)) {
        dirty_.mark(range.offset, range.length);
        bytes += range.length;
    }
    logger().info("{}: {}; {} of {} bytes differ from the local pool", describe(), why, bytes,
                  length);
}

// One info line per session, so users (and rpmem-bench pmemobj, which parses the
// "N persists" field) see how many round trips their workload made.
void Replica::log_usage() const {
    LaneUsage total;
    for (const LaneUsage& lane : usage_) {
        total.persists += lane.persists;
        total.deep_persists += lane.deep_persists;
        total.flushes += lane.flushes;
        total.drains += lane.drains;
        total.reads += lane.reads;
        total.bytes += lane.bytes;
        total.posted_ahead += lane.posted_ahead;
    }
    logger().info("{}: closing pool set {}: {} persists, {} deep persists, {} flushes, {} "
                  "drains, {} reads, {} bytes on {} lanes; {} persists posted by a sibling",
                  where_, pool_set_, total.persists, total.deep_persists, total.flushes,
                  total.drains, total.reads, total.bytes, usage_.size(), total.posted_ahead);
}

Result<void> Replica::close() {
    if (closed_)
        return {};
    closed_ = true;
    fan_out_.reset(); // no sibling posts here from now on
    // A resync under way is given up to RPMEM_TIMEOUT to finish, so that a program ending soon
    // after its replica came back leaves it consistent rather than outdated.
    const auto patience = std::chrono::steady_clock::now() + settings_.timeout;
    while (sync_.load(std::memory_order_acquire) == SyncState::resyncing &&
           std::chrono::steady_clock::now() < patience)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    {
        const std::lock_guard lock(recovery_mutex_);
        stopping_ = true;
    }
    recovery_wake_.notify_all();
    if (recovery_.joinable())
        recovery_.join();
    log_usage();
    if (!connection_) {
        logger().warn("{}: closed while degraded and disconnected, {} extents behind; the next "
                      "open brings the replica up to date",
                      describe(), dirty_.count());
        return {};
    }
    const bool in_sync =
        sync_.load() == SyncState::in_sync && !broken_.load(std::memory_order_acquire);
    if (!in_sync && !broken_.load())
        logger().warn("{}: closed while {}, {} extents behind: the target marks it outdated; "
                      "the next open brings it up to date",
                      describe(), sync_.load() == SyncState::degraded ? "degraded" : "resyncing",
                      dirty_.count());
    // Fabric first, so the target sees the lanes go before the close request.
    connection_->lanes.reset();
    auto reply = channel::expect<protocol::CloseReply>(
        connection_->control->call(protocol::CloseRequest{.remove = false, .in_sync = in_sync}),
        fmt::format("{}: closing pool set {}", where_, pool_set_));
    connection_.reset();
    if (!reply)
        return fail(std::move(reply.error()));
    return {};
}

Result<std::unique_ptr<Replica>>
Replica::start(bool create, const Settings& settings, const Target& target,
               std::string_view pool_set, std::span<std::byte> pool, unsigned& lanes,
               const PoolAttributes* create_attributes, PoolAttributes* open_attributes,
               bool bring_up_to_date, std::shared_ptr<SiblingGroup> siblings) {
    configure_logger(settings);
    std::unique_ptr<Replica> session(
        new Replica(settings, target, pool_set, pool, std::move(siblings)));
    if (auto established =
            session->establish(create, lanes, create_attributes, open_attributes, bring_up_to_date);
        !established) {
        // Create of an existing pool and open of a missing one are answers the caller acts on
        // (PMDK's create-or-open idiom), not failures of the replica.
        const int cause = established.error().errno_value();
        const bool expected = create ? cause == EEXIST : cause == ENOENT;
        logger().log(expected ? spdlog::level::info : spdlog::level::err, "{} {} on {}: {}",
                     create ? "creating" : "opening", pool_set, target.to_string(),
                     established.error().message());
        return fail(std::move(established.error()));
    }
    logger().info("{} {} on {}: {} lanes, generation {}", create ? "created" : "opened", pool_set,
                  target.to_string(), lanes, session->generation_);
    session->fan_out_.emplace(session->siblings_,
                              static_cast<SiblingGroup::FanOutMember&>(*session));
    return session;
}

Result<std::unique_ptr<Replica>> Replica::create(const Settings& settings, const Target& target,
                                                 std::string_view pool_set,
                                                 std::span<std::byte> pool, unsigned& lanes,
                                                 const PoolAttributes* attributes,
                                                 std::shared_ptr<SiblingGroup> siblings) {
    return start(true, settings, target, pool_set, pool, lanes, attributes, nullptr, true,
                 std::move(siblings));
}

Result<std::unique_ptr<Replica>> Replica::open(const Settings& settings, const Target& target,
                                               std::string_view pool_set, std::span<std::byte> pool,
                                               unsigned& lanes, PoolAttributes* attributes,
                                               bool bring_up_to_date,
                                               std::shared_ptr<SiblingGroup> siblings) {
    return start(false, settings, target, pool_set, pool, lanes, nullptr, attributes,
                 bring_up_to_date, std::move(siblings));
}

Result<std::vector<std::uint64_t>>
Replica::digests(std::size_t offset, std::size_t length, std::size_t extent_size,
                 const std::function<void(std::uint64_t bytes)>& on_progress) {
    const std::string what =
        fmt::format("{}: digests of [{}, +{}) of pool set {}", where_, offset, length, pool_set_);
    if (closed_ || !connection_)
        return fail(EINVAL, what + ": the replica is closed or not connected");
    if (auto problem = protocol::check_digest_extent_size(extent_size))
        return fail(EINVAL, fmt::format("{}: {}: {}", what, problem->field, problem->reason));
    if (offset + length < offset)
        return fail(EINVAL,
                    fmt::format("{}: offset: {} + length {} overflows", what, offset, length));
    // Each request covers a multiple of the extent size, so the extents of consecutive
    // requests line up with those of the whole range.
    const auto size = static_cast<std::uint32_t>(extent_size);
    const std::uint64_t span = protocol::digest_request_span(size);
    std::vector<std::uint64_t> digests;
    for (std::uint64_t done = 0; done < length;) {
        protocol::DigestRequest request{offset + done, std::min<std::uint64_t>(span, length - done),
                                        size};
        auto answer = connection_->control->call(request);
        // A daemon that predates digests answers with an error reply: say what it said.
        if (const auto* refused = answer ? std::get_if<protocol::ErrorReply>(&*answer) : nullptr)
            return fail(protocol::errno_of(refused->status),
                        fmt::format("{}: refused: {}", what, refused->message), ErrorSource::remote,
                        static_cast<int>(refused->status));
        auto reply = channel::expect<protocol::DigestReply>(std::move(answer), what);
        if (!reply)
            return fail(std::move(reply.error()));
        const std::uint64_t expected = (request.length + size - 1) / size;
        if (reply->digests.size() != expected)
            return fail(EPROTO, fmt::format("{}: the target sent {} digests for {} extents", what,
                                            reply->digests.size(), expected));
        digests.insert(digests.end(), reply->digests.begin(), reply->digests.end());
        done += request.length;
        if (on_progress)
            on_progress(request.length);
    }
    return digests;
}

} // namespace rpmem::client
