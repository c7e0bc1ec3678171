// SPDX-License-Identifier: BSD-3-Clause
#include "client/replica.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "channel/client.h"
#include "client/lane_set.h"
#include "client/logger.h"
#include "protocol/request.h"

namespace rpmem::client {

namespace {

constexpr std::size_t kPoolHeaderSize = 4096; // offsets below it hold the pool header
} // namespace

void Replica::LaneGuard::add_pending(std::size_t offset, std::size_t length) noexcept {
    if (pending_begin == pending_end) {
        pending_begin = offset;
        pending_end = offset + length;
    } else {
        pending_begin = std::min(pending_begin, offset);
        pending_end = std::max(pending_end, offset + length);
    }
}

Range Replica::LaneGuard::take_pending() noexcept {
    const Range pending{pending_begin, pending_end - pending_begin};
    pending_begin = pending_end = 0;
    return pending;
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
    , recovery_(*this, pool.size(), siblings_->quorum()) {}

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
// stripes (the order Recovery's copy takes them in too), and the state read again under it:
// while degraded a call only records its range (and a drain its lane's pending flushes); while
// resyncing it holds its stripes. `length` 0: a drain, which holds every stripe.
template <typename Send>
Result<void> Replica::on_lane(const char* step, unsigned lane, std::size_t offset,
                              std::size_t length, Send&& send) {
    LaneGuard& guard = guards_[lane];
    const bool drain = length == 0;
    for (;;) {
        std::optional<ExtentLocks::Hold> stripes;
        if (recovery_.state() == SyncState::resyncing)
            stripes.emplace(
                recovery_.locks(),
                drain ? ~0ULL : ExtentLocks::stripes_of(offset, length, DirtyExtents::kExtentSize),
                false);
        std::unique_lock lock(guard.mutex);
        const SyncState state = recovery_.state();
        if (state == SyncState::resyncing && !stripes)
            continue; // the resync began meanwhile: take the stripes first
        if (state == SyncState::degraded) {
            const Range missed = drain ? guard.take_pending() : Range{offset, length};
            recovery_.mark_missed(missed.offset, missed.length);
            return {};
        }
        Result<void> result = send(connection_->lanes->lane(lane), guard);
        if (result)
            return result;
        // Degraded, the application going on with its local pool: always under continue; under
        // error or abort only while enough sibling replicas stay in sync (min-in-sync-replicas).
        if (!recovery_.leave_sync(settings_.on_replica_failure == FailurePolicy::continue_degraded))
            return sticky(std::move(result));
        // What this lane may not have delivered: this call's range and its pending flushes.
        const Range pending = guard.take_pending();
        recovery_.mark_missed(pending.offset, pending.length);
        recovery_.degrade(step, offset, length, result.error());
        return {};
    }
}

Result<void> Replica::persist(std::size_t offset, std::size_t length, unsigned lane,
                              PersistMode mode) {
    if (auto bad = check_write("rpmem_persist", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    if (auto queued = queue_async(offset, length, OrderedStream::Call::persist))
        return std::move(*queued);
    return on_lane(
        "rpmem_persist", lane, offset, length,
        [&](persist::InitiatorLane& on, LaneGuard& guard) -> Result<void> {
            Result<void> result;
            if (guard.ahead.claim(connection_.get(), offset, pool_.subspan(offset, length))) {
                // A sibling's call posted this very persist on this lane: wait for
                // our own target's acknowledgement of it (and all before it).
                result = on.drain();
                if (result)
                    ++guard.usage.posted_by_sibling;
            } else {
                // Ours first, then the siblings' (each on its own lane, not waited
                // for), then the wait for ours: the round trips overlap.
                result = on.flush(offset, length, mode == PersistMode::relaxed);
                if (result && fan_out_)
                    fan_out_->post_to_siblings(offset, length, lane);
                if (result)
                    result = on.drain();
            }
            if (result) {
                ++guard.usage.persists;
                guard.usage.bytes += length;
                guard.take_pending(); // the drain covered them
            }
            return result;
        });
}

Result<void> Replica::deep_persist(std::size_t offset, std::size_t length, unsigned lane) {
    if (auto bad = check_write("rpmem_deep_persist", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    if (auto queued = queue_async(offset, length, OrderedStream::Call::deep_persist))
        return std::move(*queued);
    return on_lane("rpmem_deep_persist", lane, offset, length,
                   [&](persist::InitiatorLane& on, LaneGuard& guard) -> Result<void> {
                       auto result = on.deep_persist(offset, length);
                       if (result) {
                           ++guard.usage.deep_persists;
                           guard.usage.bytes += length;
                           guard.take_pending();
                       }
                       return result;
                   });
}

Result<void> Replica::flush(std::size_t offset, std::size_t length, unsigned lane,
                            PersistMode mode) {
    if (auto bad = check_write("rpmem_flush", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    if (auto queued = queue_async(offset, length, OrderedStream::Call::flush))
        return std::move(*queued);
    return on_lane("rpmem_flush", lane, offset, length,
                   [&](persist::InitiatorLane& on, LaneGuard& guard) -> Result<void> {
                       auto result = on.flush(offset, length, mode == PersistMode::relaxed);
                       if (result) {
                           ++guard.usage.flushes;
                           guard.usage.bytes += length;
                           guard.add_pending(offset, length);
                       }
                       return result;
                   });
}

Result<void> Replica::drain(unsigned lane) {
    if (auto bad = check_lane("rpmem_drain", lane); !bad)
        return bad;
    if (auto broken = check_broken(); !broken)
        return broken;
    // Asynchronous: the queue within its bounds; then what the lane itself still carries.
    if (stream_ && recovery_.state() == SyncState::in_sync)
        if (auto within = sticky(stream_->wait_within_bounds()); !within)
            return within;
    return on_lane("rpmem_drain", lane, 0, 0,
                   [&](persist::InitiatorLane& on, LaneGuard& guard) -> Result<void> {
                       auto result = on.drain();
                       if (result) {
                           ++guard.usage.drains;
                           guard.take_pending();
                       }
                       return result;
                   });
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
    // What the replica holds once it holds every persist made so far.
    if (auto caught_up = sticky(wait_replicated(settings_.timeout)); !caught_up)
        return caught_up;
    LaneGuard& guard = guards_[lane];
    const std::lock_guard lock(guard.mutex);
    // A replica that is not in sync has nothing trustworthy to read.
    if (recovery_.state() != SyncState::in_sync)
        return fail(ENOTCONN, fmt::format("rpmem_read: {} is degraded ({} extents behind); "
                                          "read the local pool",
                                          describe(), recovery_.dirty_extents()));
    auto result = sticky(connection_->lanes->lane(lane).read(into, offset));
    if (result) {
        ++guard.usage.reads;
        guard.usage.bytes += into.size();
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
                 std::uint64_t expected_generation) {
    auto session = start_session(settings_, target_,
                                 {.create = create,
                                  .pool_set = pool_set_,
                                  .pool = pool_,
                                  .lanes = lanes,
                                  .create_attributes = create_attributes,
                                  .expected_generation = expected_generation});
    if (!session)
        return fail(std::move(session.error()));
    generation_ = (*session)->generation;
    data_start_ = (*session)->has_headers ? kPoolHeaderSize : 0;
    return session;
}

Result<void> Replica::establish(bool create, unsigned& lanes,
                                const PoolAttributes* create_attributes,
                                PoolAttributes* open_attributes, bool bring_up_to_date) {
    auto connection = connect(create, lanes_with_stream(lanes_to_request(lanes, settings_)),
                              create_attributes, 0);
    if (!connection) {
        closed_ = true;
        return fail(std::move(connection.error()));
    }
    connection_ = std::move(*connection);
    found_state_ = connection_->found_state;
    const PoolAttributes stored = connection_->attributes;
    connected_lanes_ = connection_->lanes->size();
    guards_ = std::make_unique<LaneGuard[]>(connected_lanes_);
    start_stream();
    lanes = lane_count_;
    recovery_.set_generation(generation_);
    if (create) {
        proof_ = {MasterProof::Verdict::proven, "this session created the replica", std::nullopt,
                  std::nullopt};
        vouched_ = true;
        return {};
    }
    if (open_attributes != nullptr)
        *open_attributes = stored;
    auto checked = recovery_.open_check(found_state_, stored, bring_up_to_date);
    if (!checked) {
        // A refusal (ESTALE) wrote nothing: the replica keeps the state it was found in. A copy
        // that failed part way leaves it outdated.
        const bool refused = checked.error().errno_value() == ESTALE;
        (void)connection_->control->call(protocol::CloseRequest{.untouched = refused});
        connection_.reset();
        closed_ = true;
        return fail(std::move(checked.error()));
    }
    proof_ = checked->proof;
    vouched_ = checked->vouched;
    return {};
}

SessionUsage Replica::usage() const {
    SessionUsage total;
    total.target = where_;
    total.pool_set = pool_set_;
    total.lanes = lane_count_;
    for (unsigned l = 0; l < lane_count_; ++l) {
        const std::lock_guard lock(guards_[l].mutex);
        total += guards_[l].usage;
    }
    if (stream_) {
        total += stream_->usage(); // the calls that went asynchronously
        const ReplicationLag lag = stream_->lag();
        total.asynchronous = true;
        total.lag_p50_us = lag.acknowledged_lag.quantile_upper_bound_ns(0.5) / 1000;
        total.lag_p99_us = lag.acknowledged_lag.quantile_upper_bound_ns(0.99) / 1000;
        total.max_lag_us = static_cast<std::uint64_t>(lag.max_age.count());
        total.max_lag_bytes = lag.max_bytes;
    }
    return total;
}

// One info line per session, so users see how many round trips their workload made; tools
// read the record in the usage file instead.
void Replica::report_usage() {
    const SessionUsage total = usage();
    logger().info("{}: closing pool set {}: {} persists, {} deep persists, {} flushes, {} "
                  "drains, {} reads, {} bytes on {} lanes; {} persists posted by a sibling",
                  where_, pool_set_, total.persists, total.deep_persists, total.flushes,
                  total.drains, total.reads, total.bytes, lane_count_, total.posted_by_sibling);
    if (settings_.usage_file.empty())
        return;
    if (auto appended = append_usage_record(settings_.usage_file, total); !appended)
        logger().error("{}: {}", where_, appended.error().message());
}

Result<void> Replica::close() {
    if (closed_)
        return {};
    closed_ = true;
    fan_out_.reset(); // no sibling posts here from now on
    Result<void> caught_up = stop_stream();
    // A resync under way is given up to RPMEM_TIMEOUT to finish, so that a program ending soon
    // after its replica came back leaves it consistent rather than outdated.
    recovery_.stop(settings_.timeout);
    report_usage();
    if (!connection_) {
        logger().warn("{}: closed while degraded and disconnected, {} extents behind; the next "
                      "open brings the replica up to date",
                      describe(), recovery_.dirty_extents());
        return caught_up;
    }
    const bool broken = broken_.load(std::memory_order_acquire);
    const SyncState state = recovery_.state();
    const bool in_sync = state == SyncState::in_sync && !broken;
    if (!in_sync && !broken)
        logger().warn("{}: closed while {}, {} extents behind: the target marks it outdated; "
                      "the next open brings it up to date",
                      describe(), state == SyncState::degraded ? "degraded" : "resyncing",
                      recovery_.dirty_extents());
    // A session that could not vouch for the replica (its local pool was not proven the
    // replica's master) leaves the state it found: never consistent on its word, never outdated
    // either (that would invite a repair).
    protocol::CloseRequest request{.remove = false, .in_sync = in_sync && vouched_ && !behind_};
    if (in_sync && !vouched_)
        request.untouched = true;
    // Fabric first, so the target sees the lanes go before the close request.
    connection_->lanes.reset();
    auto reply = channel::expect<protocol::CloseReply>(
        connection_->control->call(request),
        fmt::format("{}: closing pool set {}", where_, pool_set_));
    connection_.reset();
    if (!reply)
        return fail(std::move(reply.error()));
    return caught_up;
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
    return request_digests(*connection_->control, what, offset, length, extent_size, on_progress);
}

} // namespace rpmem::client
