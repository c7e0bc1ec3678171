// SPDX-License-Identifier: BSD-3-Clause
#include "client/replica.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
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
constexpr unsigned kMaxDefaultLanes = 16;

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

} // namespace

Replica::Replica(const Settings& settings, const Target& target, std::string_view pool_set,
                 std::span<std::byte> pool)
    : settings_(settings)
    , target_(target)
    , where_(fmt::format("{}:{}", target.host, target.port.value_or(kDefaultPort)))
    , pool_set_(pool_set)
    , pool_(pool) {}

Replica::~Replica() {
    if (!closed_)
        (void)close();
}

unsigned Replica::lane_count() const noexcept {
    return lanes_ ? lanes_->size() : 0;
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
    if (has_header_ && offset < kPoolHeaderSize)
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

// Data-path errors break the replica for good (PMDK's sticky errors).

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

// Counts a data-path call that succeeded, for the usage line logged at close.

Result<void> Replica::counted(Result<void> result, std::uint64_t& calls, std::size_t bytes,
                              unsigned lane) {
    if (result) {
        ++calls;
        usage_[lane].bytes += bytes;
    }
    return result;
}

Result<void> Replica::persist(std::size_t offset, std::size_t length, unsigned lane,
                              PersistMode mode) {
    if (auto bad = check_write("rpmem_persist", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    return counted(sticky(lanes_->lane(lane).persist(offset, length, mode == PersistMode::relaxed)),
                   usage_[lane].persists, length, lane);
}

Result<void> Replica::deep_persist(std::size_t offset, std::size_t length, unsigned lane) {
    if (auto bad = check_write("rpmem_deep_persist", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    return counted(sticky(lanes_->lane(lane).deep_persist(offset, length)),
                   usage_[lane].deep_persists, length, lane);
}

Result<void> Replica::flush(std::size_t offset, std::size_t length, unsigned lane,
                            PersistMode mode) {
    if (auto bad = check_write("rpmem_flush", offset, length, lane); !bad)
        return bad;
    if (length == 0)
        return {};
    return counted(sticky(lanes_->lane(lane).flush(offset, length, mode == PersistMode::relaxed)),
                   usage_[lane].flushes, length, lane);
}

Result<void> Replica::drain(unsigned lane) {
    if (auto bad = check_lane("rpmem_drain", lane); !bad)
        return bad;
    if (auto broken = check_broken(); !broken)
        return broken;
    return counted(sticky(lanes_->lane(lane).drain()), usage_[lane].drains, 0, lane);
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
    if (has_header_ && offset < kPoolHeaderSize && !into.empty())
        return fail(EINVAL, fmt::format("rpmem_read: offset {} is inside the pool header (the "
                                        "first {} bytes), which the target does not expose; "
                                        "rpmem_open returns its attributes",
                                        offset, kPoolHeaderSize));
    if (auto broken = check_broken(); !broken)
        return broken;
    if (into.empty())
        return {};
    return counted(sticky(lanes_->lane(lane).read(into, offset)), usage_[lane].reads, into.size(),
                   lane);
}

Result<void> Replica::set_attributes(const PoolAttributes& attributes) {
    if (auto broken = check_broken(); !broken)
        return broken;
    auto reply = channel::expect<protocol::SetAttrReply>(
        control_->call(protocol::SetAttrRequest{attributes}),
        fmt::format("{}: setting the attributes of {}", where_, pool_set_));
    if (!reply)
        return fail(std::move(reply.error()));
    return {};
}

Result<void> Replica::establish(bool create, unsigned& lanes,
                                const PoolAttributes* create_attributes,
                                PoolAttributes* open_attributes) {
    auto control = connect_control(settings_, target_, [this](const Error&) {
        channel_failed_.store(true, std::memory_order_release);
    });
    if (!control)
        return abandon(std::move(control.error()));
    control_ = std::move(*control);

    const unsigned requested = lanes_to_request(lanes, settings_);
    protocol::DataPath data_path;
    if (create) {
        protocol::CreateRequest request{.pool_set = pool_set_,
                                        .pool_size = pool_.size(),
                                        .lanes = requested,
                                        .provider = provider_preference(settings_),
                                        .persist_method = settings_.method};
        if (create_attributes != nullptr)
            request.attributes = *create_attributes;
        auto reply = channel::expect<protocol::CreateReply>(
            control_->call(request), fmt::format("{}: creating pool set {}", where_, pool_set_));
        if (!reply)
            return abandon(std::move(reply.error()));
        data_path = reply->data_path;
        has_header_ = create_attributes != nullptr && !create_attributes->is_zero();
        created_ = true;
    } else {
        protocol::OpenRequest request{.pool_set = pool_set_,
                                      .pool_size = pool_.size(),
                                      .lanes = requested,
                                      .provider = provider_preference(settings_),
                                      .persist_method = settings_.method};
        auto reply = channel::expect<protocol::OpenReply>(
            control_->call(request), fmt::format("{}: opening pool set {}", where_, pool_set_));
        if (!reply)
            return abandon(std::move(reply.error()));
        data_path = reply->data_path;
        has_header_ = !reply->attributes.is_zero();
        if (open_attributes != nullptr)
            *open_attributes = reply->attributes;
    }

    auto connected = LaneSet::connect(data_path, control_->peer_address(), pool_, settings_,
                                      std::min(requested, data_path.lanes), &channel_failed_);
    if (!connected) {
        // Leave nothing behind: a pool this call created is removed again (PMDK did the same).
        (void)control_->call(protocol::CloseRequest{.remove = created_});
        return abandon(std::move(connected.error()));
    }
    lanes_ = std::move(*connected);
    lanes = lane_count();
    usage_.resize(lanes);
    return {};
}

// Ends a session that never got its pool (or its lanes): no close request for a pool the
// target did not open, no usage line for a pool nobody used.
Result<void> Replica::abandon(Error why) {
    closed_ = true;
    if (control_)
        control_->close();
    return fail(std::move(why));
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
    }
    logger().info("{}: closing pool set {}: {} persists, {} deep persists, {} flushes, {} "
                  "drains, {} reads, {} bytes on {} lanes",
                  where_, pool_set_, total.persists, total.deep_persists, total.flushes,
                  total.drains, total.reads, total.bytes, usage_.size());
}

Result<void> Replica::close() {
    if (closed_)
        return {};
    closed_ = true;
    log_usage();
    // Fabric first, so the target sees the lanes go before the close request.
    lanes_.reset();
    auto reply = channel::expect<protocol::CloseReply>(
        control_->call(protocol::CloseRequest{.remove = false}),
        fmt::format("{}: closing pool set {}", where_, pool_set_));
    control_->close();
    if (!reply)
        return fail(std::move(reply.error()));
    return {};
}

Result<std::unique_ptr<Replica>> Replica::start(bool create, const Settings& settings,
                                                const Target& target, std::string_view pool_set,
                                                std::span<std::byte> pool, unsigned& lanes,
                                                const PoolAttributes* create_attributes,
                                                PoolAttributes* open_attributes) {
    configure_logger(settings);
    std::unique_ptr<Replica> session(new Replica(settings, target, pool_set, pool));
    if (auto established = session->establish(create, lanes, create_attributes, open_attributes);
        !established) {
        logger().error("{} {} on {}: {}", create ? "creating" : "opening", pool_set,
                       target.to_string(), established.error().message());
        return fail(std::move(established.error()));
    }
    logger().info("{} {} on {}: {} lanes", create ? "created" : "opened", pool_set,
                  target.to_string(), lanes);
    return session;
}

Result<std::unique_ptr<Replica>> Replica::create(const Settings& settings, const Target& target,
                                                 std::string_view pool_set,
                                                 std::span<std::byte> pool, unsigned& lanes,
                                                 const PoolAttributes* attributes) {
    return start(true, settings, target, pool_set, pool, lanes, attributes, nullptr);
}

Result<std::unique_ptr<Replica>> Replica::open(const Settings& settings, const Target& target,
                                               std::string_view pool_set, std::span<std::byte> pool,
                                               unsigned& lanes, PoolAttributes* attributes) {
    return start(false, settings, target, pool_set, pool, lanes, nullptr, attributes);
}

Result<std::vector<std::uint64_t>> Replica::digests(std::size_t offset, std::size_t length,
                                                    std::size_t extent_size) {
    const std::string what =
        fmt::format("{}: digests of [{}, +{}) of pool set {}", where_, offset, length, pool_set_);
    if (closed_ || !control_)
        return fail(EINVAL, what + ": the replica is closed");
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
        auto answer = control_->call(request);
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
    }
    return digests;
}

} // namespace rpmem::client
