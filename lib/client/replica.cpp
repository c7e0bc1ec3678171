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
#include "fabric/domain.h"
#include "fabric/endpoint.h"
#include "fabric/event_queue.h"
#include "fabric/fabric.h"
#include "fabric/memory_region.h"
#include "fabric/provider.h"
#include "persist/initiator_lane.h"
#include "persist/lane_binding.h"
#include "protocol/request.h"

namespace rpmem::client {

namespace {

constexpr std::size_t kPoolHeaderSize = 4096; // offsets below it hold the pool header
constexpr std::size_t kPage = 4096;
constexpr std::size_t kBounceSize = 256 * 1024;
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

protocol::PersistMethod method_preference(const Settings& settings) {
    if (!settings.method)
        return protocol::PersistMethod::any;
    switch (*settings.method) {
    case persist::Method::apm:
        return protocol::PersistMethod::apm;
    case persist::Method::gpspm:
        return protocol::PersistMethod::gpspm;
    case persist::Method::commit:
        return protocol::PersistMethod::commit;
    }
    return protocol::PersistMethod::any;
}

Result<persist::Method> method_of(protocol::PersistMethod method) {
    switch (method) {
    case protocol::PersistMethod::apm:
        return persist::Method::apm;
    case protocol::PersistMethod::gpspm:
        return persist::Method::gpspm;
    case protocol::PersistMethod::commit:
        return persist::Method::commit;
    case protocol::PersistMethod::any:
        break;
    }
    return fail(EPROTO, "the target chose no persistence method", ErrorSource::protocol);
}

// Page-aligned memory for the lanes' message buffers.
struct FreeDeleter {
    void operator()(std::byte* memory) const noexcept { std::free(memory); }
};
using AlignedMemory = std::unique_ptr<std::byte, FreeDeleter>;

// A replica with an open session: see Replica. Members are declared parent before child, so
// that lanes close before the regions, queues, domain and fabric they use, and all of those
// before the control channel.
class Session final : public Replica {
public:
    Session(const Settings& settings, const Target& target, std::string_view pool_set,
            std::span<std::byte> pool)
        : settings_(settings)
        , target_(target)
        , where_(fmt::format("{}:{}", target.host, target.port.value_or(kDefaultPort)))
        , pool_set_(pool_set)
        , pool_(pool) {}

    ~Session() override {
        if (!closed_)
            (void)close();
    }

    Result<void> establish(bool create, unsigned& lanes, const PoolAttributes* create_attributes,
                           PoolAttributes* open_attributes);

    unsigned lane_count() const noexcept override { return static_cast<unsigned>(lanes_.size()); }

    Result<void> persist(std::size_t offset, std::size_t length, unsigned lane,
                         PersistMode mode) override {
        if (auto bad = check_write("rpmem_persist", offset, length, lane); !bad)
            return bad;
        if (length == 0)
            return {};
        return sticky(lanes_[lane]->persist(offset, length, mode == PersistMode::relaxed));
    }

    Result<void> deep_persist(std::size_t offset, std::size_t length, unsigned lane) override {
        if (auto bad = check_write("rpmem_deep_persist", offset, length, lane); !bad)
            return bad;
        if (length == 0)
            return {};
        return sticky(lanes_[lane]->deep_persist(offset, length));
    }

    Result<void> flush(std::size_t offset, std::size_t length, unsigned lane,
                       PersistMode mode) override {
        if (auto bad = check_write("rpmem_flush", offset, length, lane); !bad)
            return bad;
        if (length == 0)
            return {};
        return sticky(lanes_[lane]->flush(offset, length, mode == PersistMode::relaxed));
    }

    Result<void> drain(unsigned lane) override {
        if (auto bad = check_lane("rpmem_drain", lane); !bad)
            return bad;
        if (auto broken = check_broken(); !broken)
            return broken;
        return sticky(lanes_[lane]->drain());
    }

    Result<void> read(std::span<std::byte> into, std::size_t offset, unsigned lane) override {
        if (auto bad = check_lane("rpmem_read", lane); !bad)
            return bad;
        if (offset > pool_.size() || into.size() > pool_.size() - offset)
            return fail(EINVAL, fmt::format("rpmem_read: range [{}, +{}) is outside the pool of "
                                            "{} bytes",
                                            offset, into.size(), pool_.size()));
        if (auto broken = check_broken(); !broken)
            return broken;
        if (into.empty())
            return {};
        return sticky(lanes_[lane]->read(into, offset));
    }

    Result<void> set_attributes(const PoolAttributes& attributes) override {
        if (auto broken = check_broken(); !broken)
            return broken;
        auto reply = channel::expect<protocol::SetAttrReply>(
            control_->call(protocol::SetAttrRequest{attributes}),
            fmt::format("{}: setting the attributes of {}", where_, pool_set_));
        if (!reply)
            return fail(std::move(reply.error()));
        return {};
    }

    Result<void> close() override;

private:
    Result<void> connect_lanes(const protocol::DataPath& data_path, unsigned lanes);
    void tear_down_fabric() noexcept;

    Result<void> check_lane(const char* step, unsigned lane) const {
        if (lane >= lanes_.size())
            return fail(EINVAL, fmt::format("{}: lane {} is not one of the {} lanes", step, lane,
                                            lanes_.size()));
        return {};
    }

    Result<void> check_write(const char* step, std::size_t offset, std::size_t length,
                             unsigned lane) const {
        if (auto bad = check_lane(step, lane); !bad)
            return bad;
        if (offset >= pool_.size() || length > pool_.size() - offset)
            return fail(EINVAL, fmt::format("{}: range [{}, +{}) is outside the pool of {} bytes",
                                            step, offset, length, pool_.size()));
        if (has_header_ && offset < kPoolHeaderSize)
            return fail(EINVAL, fmt::format("{}: offset {} is inside the pool header (the "
                                            "first {} bytes)",
                                            step, offset, kPoolHeaderSize));
        return check_broken();
    }

    Result<void> check_broken() const {
        if (!broken_.load(std::memory_order_acquire))
            return {};
        const std::lock_guard lock(broken_mutex_);
        return fail(*broken_error_);
    }

    // Data-path errors break the replica for good (PMDK's sticky errors).
    Result<void> sticky(Result<void> result) {
        if (result)
            return result;
        const std::lock_guard lock(broken_mutex_);
        if (!broken_error_)
            broken_error_ = result.error();
        broken_.store(true, std::memory_order_release);
        return fail(*broken_error_);
    }

    Settings settings_;
    Target target_;
    std::string where_; // "host:port" of the control channel, for messages
    std::string pool_set_;
    std::span<std::byte> pool_;
    bool has_header_ = false;
    bool created_ = false;
    bool closed_ = false;

    std::atomic<bool> broken_{false};
    mutable std::mutex broken_mutex_;
    std::optional<Error> broken_error_;
    std::atomic<bool> channel_failed_{false};

    std::unique_ptr<channel::Client> control_;
    std::optional<fabric::Provider> provider_;
    std::optional<fabric::Fabric> fabric_;
    std::optional<fabric::Domain> domain_;
    std::unique_ptr<fabric::EventQueue> events_;
    std::optional<fabric::MemoryRegion> pool_region_;
    AlignedMemory buffers_;
    std::optional<fabric::MemoryRegion> buffer_region_;
    std::vector<std::unique_ptr<persist::InitiatorLane>> lanes_;
};

Result<void> Session::establish(bool create, unsigned& lanes,
                                const PoolAttributes* create_attributes,
                                PoolAttributes* open_attributes) {
    auto control = connect_control(settings_, target_, [this](const Error&) {
        channel_failed_.store(true, std::memory_order_release);
    });
    if (!control)
        return fail(std::move(control.error()));
    control_ = std::move(*control);

    const unsigned requested = lanes_to_request(lanes, settings_);
    protocol::DataPath data_path;
    if (create) {
        protocol::CreateRequest request{.pool_set = pool_set_,
                                        .pool_size = pool_.size(),
                                        .lanes = requested,
                                        .provider = provider_preference(settings_),
                                        .persist_method = method_preference(settings_)};
        if (create_attributes != nullptr)
            request.attributes = *create_attributes;
        auto reply = channel::expect<protocol::CreateReply>(
            control_->call(request), fmt::format("{}: creating pool set {}", where_, pool_set_));
        if (!reply)
            return fail(std::move(reply.error()));
        data_path = reply->data_path;
        has_header_ = create_attributes != nullptr && !create_attributes->is_zero();
        created_ = true;
    } else {
        protocol::OpenRequest request{.pool_set = pool_set_,
                                      .pool_size = pool_.size(),
                                      .lanes = requested,
                                      .provider = provider_preference(settings_),
                                      .persist_method = method_preference(settings_)};
        auto reply = channel::expect<protocol::OpenReply>(
            control_->call(request), fmt::format("{}: opening pool set {}", where_, pool_set_));
        if (!reply)
            return fail(std::move(reply.error()));
        data_path = reply->data_path;
        has_header_ = !reply->attributes.is_zero();
        if (open_attributes != nullptr)
            *open_attributes = reply->attributes;
    }

    auto connected = connect_lanes(data_path, std::min(requested, data_path.lanes));
    if (!connected) {
        // Leave nothing behind: a pool this call created is removed again (PMDK did the same).
        tear_down_fabric();
        (void)control_->call(protocol::CloseRequest{.remove = created_});
        control_->close();
        closed_ = true;
        return fail(std::move(connected.error()));
    }
    lanes = lane_count();
    return {};
}

Result<void> Session::connect_lanes(const protocol::DataPath& data_path, unsigned lanes) {
    if (lanes == 0)
        return fail(EPROTO, fmt::format("{}: the target granted no lanes", where_),
                    ErrorSource::protocol);
    auto method = method_of(data_path.persist_method);
    if (!method)
        return fail(std::move(method.error()));
    if (data_path.pool_size < pool_.size())
        return fail(EFBIG, fmt::format("{}: the remote pool has {} bytes, fewer than the {} of "
                                       "the local pool",
                                       where_, data_path.pool_size, pool_.size()));
    if (data_path.inline_buffer_size < 64 || data_path.inline_buffer_size > (64U << 20))
        return fail(
            EPROTO,
            fmt::format("{}: unusable inline buffer size {}", where_, data_path.inline_buffer_size),
            ErrorSource::protocol);

    const std::string host = data_path.host.empty() ? target_.host : data_path.host;
    const std::string fabric_peer = fmt::format("{}:{}", host, data_path.port);
    auto provider = fabric::select_provider(
        {data_path.provider, fabric::Role::connector, host, std::to_string(data_path.port)});
    if (!provider)
        return fail(std::move(provider.error())
                        .add_context(fmt::format("{}: finding fabric provider {} for {}", where_,
                                                 data_path.provider, fabric_peer)));
    provider_.emplace(std::move(*provider));
    const fabric::Capabilities& caps = provider_->capabilities;

    auto step = [&](Error error, std::string_view what) {
        return std::move(error).add_context(fmt::format("{}: {}", fabric_peer, what));
    };
    auto fabric = fabric::Fabric::open(*provider_->info);
    if (!fabric)
        return fail(step(std::move(fabric.error()), "opening the fabric"));
    fabric_.emplace(std::move(*fabric));
    auto domain = fabric::Domain::open(*fabric_, *provider_->info);
    if (!domain)
        return fail(step(std::move(domain.error()), "opening the fabric domain"));
    domain_.emplace(std::move(*domain));
    auto events = fabric::EventQueue::open(*fabric_);
    if (!events)
        return fail(step(std::move(events.error()), "opening the event queue"));
    events_ = std::move(*events);

    auto pool_region = fabric::MemoryRegion::register_memory(*domain_, pool_.data(), pool_.size(),
                                                             fabric::access::kWriteSource);
    if (!pool_region)
        return fail(step(std::move(pool_region.error()), "registering the local pool"));
    pool_region_.emplace(std::move(*pool_region));

    const std::size_t per_lane =
        persist::InitiatorLane::buffer_size(data_path.inline_buffer_size, kBounceSize);
    const std::size_t total = (lanes * per_lane + kPage - 1) / kPage * kPage;
    buffers_.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, total)));
    if (!buffers_)
        return fail(ENOMEM,
                    fmt::format("{}: allocating {} bytes of lane buffers", fabric_peer, total));
    std::memset(buffers_.get(), 0, total);
    auto buffer_region = fabric::MemoryRegion::register_memory(
        *domain_, buffers_.get(), total,
        fabric::access::kSendSource | fabric::access::kReceiveTarget | fabric::access::kReadTarget);
    if (!buffer_region)
        return fail(step(std::move(buffer_region.error()), "registering the lane buffers"));
    buffer_region_.emplace(std::move(*buffer_region));

    // Connect every lane at once, then wait for each: the handshakes overlap.
    fabric::EndpointOptions options;
    options.wait.spin = settings_.spin;
    options.tx_depth = settings_.work_queue_size;
    options.rx_depth = persist::kLaneCredits;
    options.tx_timeout = settings_.timeout;
    options.peer = fabric_peer;
    std::vector<fabric::Endpoint> endpoints;
    endpoints.reserve(lanes);
    for (unsigned lane = 0; lane < lanes; ++lane) {
        auto endpoint = fabric::Endpoint::create(*domain_, *provider_->info, *events_, options);
        if (!endpoint)
            return fail(step(std::move(endpoint.error()), fmt::format("opening lane {}", lane)));
        persist::LaneBinding binding;
        std::copy(data_path.token.begin(), data_path.token.end(), binding.token.begin());
        binding.lane = lane;
        auto request = persist::encode(binding);
        if (auto posted = endpoint->connect(request); !posted)
            return fail(step(std::move(posted.error()), fmt::format("connecting lane {}", lane)));
        endpoints.push_back(std::move(*endpoint));
    }
    const fabric::Deadline deadline = fabric::deadline_after(settings_.connect_timeout);
    for (unsigned lane = 0; lane < lanes; ++lane) {
        if (auto up = endpoints[lane].wait_connected(deadline); !up)
            return fail(step(std::move(up.error()), fmt::format("connecting lane {}", lane)));
    }

    persist::InitiatorConfig config;
    config.method = *method;
    config.inline_size = data_path.inline_buffer_size;
    config.bounce_size = kBounceSize;
    config.max_write = caps.max_msg_size != 0 ? caps.max_msg_size : (1ULL << 30);
    config.timeout = settings_.timeout;
    config.abort = &channel_failed_;
    config.target = fabric_peer;
    const fabric::RemoteRegion remote{data_path.remote_base, data_path.remote_key,
                                      data_path.pool_size};
    for (unsigned lane = 0; lane < lanes; ++lane) {
        auto initiator = std::make_unique<persist::InitiatorLane>(
            lane, std::move(endpoints[lane]), *pool_region_, remote, *buffer_region_,
            lane * per_lane, config);
        if (auto started = initiator->start(); !started)
            return fail(std::move(started.error()));
        lanes_.push_back(std::move(initiator));
    }
    return {};
}

void Session::tear_down_fabric() noexcept {
    for (auto& lane : lanes_)
        lane->shutdown();
    lanes_.clear();
    buffer_region_.reset();
    buffers_.reset();
    pool_region_.reset();
    events_.reset();
    domain_.reset();
    fabric_.reset();
    provider_.reset();
}

Result<void> Session::close() {
    if (closed_)
        return {};
    closed_ = true;
    // Fabric first, so the target sees the lanes go before the close request.
    tear_down_fabric();
    auto reply = channel::expect<protocol::CloseReply>(
        control_->call(protocol::CloseRequest{.remove = false}),
        fmt::format("{}: closing pool set {}", where_, pool_set_));
    control_->close();
    if (!reply)
        return fail(std::move(reply.error()));
    return {};
}

Result<std::unique_ptr<Replica>> start(bool create, const Settings& settings, const Target& target,
                                       std::string_view pool_set, std::span<std::byte> pool,
                                       unsigned& lanes, const PoolAttributes* create_attributes,
                                       PoolAttributes* open_attributes) {
    auto session = std::make_unique<Session>(settings, target, pool_set, pool);
    if (auto established = session->establish(create, lanes, create_attributes, open_attributes);
        !established)
        return fail(std::move(established.error()));
    return std::unique_ptr<Replica>(std::move(session));
}

} // namespace

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

} // namespace rpmem::client
