// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/fabric_target.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <pthread.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include "fabric/completion_queue.h"
#include "fabric/domain.h"
#include "fabric/endpoint.h"
#include "fabric/event_queue.h"
#include "fabric/fabric.h"
#include "fabric/memory_region.h"
#include "fabric/passive_endpoint.h"
#include "fabric/provider.h"
#include "fabric/waiter.h"
#include "persist/lane_binding.h"
#include "persist/lane_layout.h"
#include "persist/request_handler.h"

namespace rpmem::daemon {

namespace {

static_assert(persist::LaneBinding::kTokenLength == protocol::kSessionTokenLength);

constexpr std::size_t kPage = 4096;
constexpr std::size_t kReplySlots = 2 * persist::kLaneCredits;
constexpr std::chrono::milliseconds kSlice{50};

// The pool as the request handler sees it.
class MappedPool final : public persist::TargetPool {
public:
    explicit MappedPool(const poolset::PoolMapping& mapping)
        : mapping_(mapping) {}
    std::span<std::byte> bytes() const noexcept override {
        return {reinterpret_cast<std::byte*>(mapping_.data()), mapping_.size()};
    }
    Result<void> persist(std::uint64_t offset, std::uint64_t length) const override {
        return mapping_.persist(offset, length);
    }
    Result<void> deep_persist(std::uint64_t offset, std::uint64_t length) const override {
        return mapping_.deep_persist(offset, length);
    }

private:
    const poolset::PoolMapping& mapping_;
};

// Page-aligned, zeroed memory for the message buffers; owns it.
class AlignedBuffer {
public:
    explicit AlignedBuffer(std::size_t size)
        : size_((size + kPage - 1) / kPage * kPage)
        , data_(static_cast<std::byte*>(std::aligned_alloc(kPage, size_))) {
        if (data_ != nullptr)
            std::memset(data_, 0, size_);
    }
    ~AlignedBuffer() { std::free(data_); }
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    std::size_t size_;
    std::byte* data_;
};

// What a posted operation's context points at: one receive or reply buffer of one lane.
struct SlotContext {
    enum class Kind { receive, reply } kind = Kind::receive;
    unsigned lane = 0;
    unsigned index = 0;
    bool busy = false; // reply buffers: a send from it has not completed yet
};

// The order providers are tried in when the client leaves the choice to the target.
constexpr std::array<std::string_view, 3> kProviderOrder{"verbs", "tcp", "sockets"};

bool allowed(const std::vector<std::string>& allow_list, std::string_view provider) {
    return allow_list.empty() ||
           std::find(allow_list.begin(), allow_list.end(), provider) != allow_list.end();
}

Result<fabric::Provider> choose_provider(const DataPlaneRequest& request) {
    std::vector<std::string_view> candidates;
    if (request.provider != protocol::ProviderPreference::any)
        candidates.push_back(protocol::name_of(request.provider));
    else
        candidates.assign(kProviderOrder.begin(), kProviderOrder.end());

    std::string reasons;
    for (std::string_view name : candidates) {
        if (!allowed(request.allowed_providers, name)) {
            reasons +=
                fmt::format("{}{} is not in allow-provider", reasons.empty() ? "" : "; ", name);
            continue;
        }
        auto provider = fabric::select_provider(
            {std::string(name), fabric::Role::listener, request.bind_host, "0"});
        if (provider)
            return provider;
        reasons += fmt::format("{}{}", reasons.empty() ? "" : "; ", provider.error().message());
    }
    return fail(EMEDIUMTYPE,
                fmt::format("no usable fabric provider for {}: {}", request.bind_host, reasons));
}

// The fabric half of one session; see start_fabric_target(). Members are declared parent
// before child so that they close child first: lanes (endpoints) before the regions, queues,
// listener, domain and fabric.
class FabricTarget final : public DataPlane {
public:
    static Result<std::unique_ptr<FabricTarget>> start(const DataPlaneRequest& request,
                                                       std::unique_ptr<persist::TargetPool> pool);

    ~FabricTarget() override { stop(); }

    const DataPlaneInfo& info() const noexcept override { return info_; }

    void stop() noexcept override {
        if (stopped_.exchange(true))
            return;
        stop_.store(true, std::memory_order_release);
        completions_->signal();
        if (responder_.joinable())
            responder_.join();
        for (Lane& lane : lanes_) {
            if (lane.endpoint) {
                (void)lane.endpoint->shutdown();
                lane.endpoint.reset();
            }
        }
        spdlog::debug("{}: data plane stopped", name_);
    }

private:
    struct Lane {
        std::optional<fabric::Endpoint> endpoint;
        std::array<SlotContext, persist::kLaneCredits> receives{};
        std::array<SlotContext, kReplySlots> replies{};
        unsigned next_reply = 0;
        bool retired = false; // was connected once and closed: never admitted again
    };

    FabricTarget(const DataPlaneRequest& request, std::unique_ptr<persist::TargetPool> pool,
                 fabric::Provider provider, fabric::Fabric fabric, fabric::Domain domain)
        : name_(request.session_name)
        , token_(request.token)
        , pool_(std::move(pool))
        , protected_prefix_(request.protected_prefix)
        , responder_spin_(request.responder_spin)
        , responder_cpu_(request.responder_cpu)
        , provider_(std::move(provider))
        , fabric_(std::move(fabric))
        , domain_(std::move(domain))
        , slot_size_(persist::message_slot_size(persist::kDefaultInlineSize))
        , lane_stride_(persist::kLaneCredits * slot_size_ + kReplySlots * persist::kReplySize)
        , buffers_(request.lanes * lane_stride_)
        , lanes_(request.lanes) {}

    Result<void> open(const DataPlaneRequest& request);
    void run() noexcept;
    void admit_requests();
    void admit(fabric::ConnectionRequest& request);
    void on_receive(const SlotContext& slot, std::size_t length);
    void send_reply(unsigned lane_index, const persist::Reply& reply);
    void close_lane(unsigned lane_index, std::string_view why);

    std::size_t receive_offset(unsigned lane, unsigned index) const noexcept {
        return lane * lane_stride_ + index * slot_size_;
    }
    std::size_t reply_offset(unsigned lane, unsigned index) const noexcept {
        return lane * lane_stride_ + persist::kLaneCredits * slot_size_ +
               index * persist::kReplySize;
    }

    std::string name_;
    protocol::SessionToken token_;
    std::unique_ptr<persist::TargetPool> pool_; // parent of the region registered over it
    std::size_t protected_prefix_;
    std::chrono::nanoseconds responder_spin_;
    int responder_cpu_;
    DataPlaneInfo info_;

    fabric::Provider provider_;
    fabric::Fabric fabric_;
    fabric::Domain domain_;
    std::unique_ptr<fabric::EventQueue> events_;
    std::unique_ptr<fabric::CompletionQueue> completions_;
    std::optional<fabric::PassiveEndpoint> listener_;
    std::optional<fabric::MemoryRegion> pool_region_;
    std::size_t slot_size_;
    std::size_t lane_stride_;
    AlignedBuffer buffers_;
    std::optional<fabric::MemoryRegion> buffer_region_;
    std::optional<persist::RequestHandler> handler_;
    std::vector<Lane> lanes_;

    std::thread responder_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> stopped_{false};
};

Result<std::unique_ptr<FabricTarget>>
FabricTarget::start(const DataPlaneRequest& request, std::unique_ptr<persist::TargetPool> pool) {
    if (pool == nullptr || request.lanes == 0 || request.protected_prefix >= pool->bytes().size())
        return fail(EINVAL, "starting the data plane: no pool, no data in it or no lanes");
    auto provider = choose_provider(request);
    if (!provider)
        return fail(std::move(provider.error()));
    auto fabric = fabric::Fabric::open(*provider->info);
    if (!fabric)
        return fail(std::move(fabric.error()).add_context("opening the fabric"));
    auto domain = fabric::Domain::open(*fabric, *provider->info);
    if (!domain)
        return fail(std::move(domain.error()).add_context("opening the fabric domain"));

    std::unique_ptr<FabricTarget> target(new FabricTarget(
        request, std::move(pool), std::move(*provider), std::move(*fabric), std::move(*domain)));
    if (auto opened = target->open(request); !opened)
        return fail(std::move(opened.error()));
    target->responder_ = std::thread([raw = target.get()] { raw->run(); });
    return target;
}

Result<void> FabricTarget::open(const DataPlaneRequest& request) {
    const fabric::Capabilities& caps = provider_.capabilities;
    if (buffers_.data() == nullptr)
        return fail(ENOMEM, "allocating the lanes' message buffers");
    unsigned lanes = static_cast<unsigned>(
        std::min<std::size_t>(request.lanes, caps.max_endpoints ? caps.max_endpoints : 1));
    lanes_.resize(lanes);

    auto events = fabric::EventQueue::open(fabric_);
    if (!events)
        return fail(std::move(events.error()).add_context("opening the event queue"));
    events_ = std::move(*events);

    // Every lane: its receives and its reply sends, plus room for the RMA traffic the
    // provider may report.
    auto completions =
        fabric::CompletionQueue::open(domain_, lanes * (persist::kLaneCredits + kReplySlots) + 64);
    if (!completions)
        return fail(std::move(completions.error()).add_context("opening the completion queue"));
    completions_ = std::move(*completions);

    // Only the pool's data is exposed, never its header: the provider refuses an RMA write at
    // offset 0 instead of letting it relabel the pool. (Containment of a hostile client does
    // not rest on the provider's bounds check, see rpmemd/worker/: this only keeps the honest
    // path narrow.)
    std::span<std::byte> data = pool_->bytes().subspan(protected_prefix_);
    auto pool_region = fabric::MemoryRegion::register_memory(domain_, data.data(), data.size(),
                                                             fabric::access::kRemoteRead |
                                                                 fabric::access::kRemoteWrite);
    if (!pool_region)
        return fail(std::move(pool_region.error()).add_context("registering the pool"));
    pool_region_.emplace(std::move(*pool_region));

    auto buffer_region = fabric::MemoryRegion::register_memory(
        domain_, buffers_.data(), buffers_.size(),
        fabric::access::kReceiveTarget | fabric::access::kSendSource);
    if (!buffer_region)
        return fail(std::move(buffer_region.error()).add_context("registering message buffers"));
    buffer_region_.emplace(std::move(*buffer_region));

    handler_.emplace(*pool_, persist::kDefaultInlineSize, protected_prefix_);

    auto listener = fabric::PassiveEndpoint::listen(fabric_, *provider_.info, *events_);
    if (!listener)
        return fail(std::move(listener.error()).add_context("listening for lanes"));
    listener_.emplace(std::move(*listener));

    for (unsigned lane = 0; lane < lanes; ++lane) {
        for (unsigned i = 0; i < persist::kLaneCredits; ++i)
            lanes_[lane].receives[i] = {SlotContext::Kind::receive, lane, i, false};
        for (unsigned i = 0; i < kReplySlots; ++i)
            lanes_[lane].replies[i] = {SlotContext::Kind::reply, lane, i, false};
    }

    fabric::RemoteRegion remote = pool_region_->remote();
    info_.provider = caps.provider;
    // A wildcard bind is dialled at the host the client reached over TLS.
    bool wildcard =
        request.bind_host.empty() || request.bind_host == "0.0.0.0" || request.bind_host == "::";
    info_.host = wildcard ? std::string() : request.bind_host;
    info_.port = listener_->port();
    // The client names pool offsets: offset 0 lies protected_prefix_ before the region (the
    // sum wraps for offset addressing, where the region starts at 0; unsigned, so well defined).
    info_.remote_base = remote.address - protected_prefix_;
    info_.remote_key = remote.key;
    info_.offset_addressing = !caps.mr_virt_addr;
    info_.lanes = lanes;
    info_.inline_buffer_size = static_cast<std::uint32_t>(persist::kDefaultInlineSize);
    info_.traits = {.software = caps.software, .offers_rma_pmem = caps.rma_pmem};
    spdlog::info("{}: data plane on {} ({}), {} lanes, {} pool bytes registered from offset {}",
                 name_, listener_->address(), caps.provider, lanes, data.size(), protected_prefix_);
    return {};
}

void FabricTarget::run() noexcept {
    if (responder_cpu_ >= 0) {
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        CPU_SET(responder_cpu_, &cpus);
        if (pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0)
            spdlog::warn("{}: cannot pin the responder to CPU {}", name_, responder_cpu_);
    }
    fabric::Waiter waiter(fabric_.get(), fabric::WaitPolicy{responder_spin_, kSlice});
    std::array<fabric::Completion, 32> completions;
    while (!stop_.load(std::memory_order_acquire)) {
        auto read = waiter.wait(*completions_, completions, events_.get(), nullptr,
                                fabric::deadline_after(kSlice));
        if (!read) {
            const fabric::CompletionError& failure = read.error();
            if (failure.context != nullptr) {
                auto* slot = static_cast<SlotContext*>(failure.context);
                slot->busy = false;
                // A connection that ends, cleanly or not, cancels the receives still posted on
                // it; "operation canceled" would only puzzle whoever reads the log.
                close_lane(slot->lane, failure.error.native_code() == FI_ECANCELED
                                           ? std::string("the initiator disconnected")
                                           : failure.error.message());
            } else if (failure.error.errno_value() != ETIMEDOUT) {
                spdlog::debug("{}: waiting for completions: {}", name_, failure.error.message());
            }
        } else {
            for (std::size_t i = 0; i < *read; ++i) {
                auto* slot = static_cast<SlotContext*>(completions[i].context);
                if (slot == nullptr)
                    continue;
                if ((completions[i].flags & FI_RECV) != 0)
                    on_receive(*slot, completions[i].length);
                else
                    slot->busy = false;
            }
        }
        admit_requests();
        for (unsigned lane = 0; lane < lanes_.size(); ++lane) {
            if (lanes_[lane].endpoint && lanes_[lane].endpoint->state().failed())
                close_lane(lane, lanes_[lane].endpoint->state().failure().message());
        }
    }
}

void FabricTarget::admit_requests() {
    while (auto request = events_->take_request())
        admit(*request);
}

void FabricTarget::admit(fabric::ConnectionRequest& request) {
    auto refuse = [&](std::string_view why) {
        spdlog::warn("{}: refused a lane connection from {}: {}", name_, request.peer, why);
        (void)listener_->reject(request);
    };
    auto binding = persist::decode_lane_binding(request.private_data);
    if (!binding)
        return refuse(binding.error().message());
    if (!persist::same_token(binding->token, token_))
        return refuse("wrong session token");
    if (binding->lane >= lanes_.size())
        return refuse(
            fmt::format("lane {} was not granted ({} were)", binding->lane, lanes_.size()));
    Lane& lane = lanes_[binding->lane];
    if (lane.endpoint || lane.retired)
        return refuse(fmt::format("lane {} is already connected or was closed", binding->lane));

    fabric::EndpointOptions options;
    options.rx_depth = persist::kLaneCredits;
    options.tx_depth = kReplySlots;
    options.peer = request.peer;
    auto endpoint =
        fabric::Endpoint::create_shared(domain_, *request.info, *events_, *completions_, options);
    if (!endpoint)
        return refuse(endpoint.error().message());
    for (unsigned i = 0; i < persist::kLaneCredits; ++i) {
        auto posted = endpoint->post_receive(*buffer_region_, receive_offset(binding->lane, i),
                                             slot_size_, &lane.receives[i]);
        if (!posted)
            return refuse(posted.error().message());
    }
    if (auto accepted = endpoint->accept(); !accepted)
        return refuse(accepted.error().message());
    lane.endpoint.emplace(std::move(*endpoint));
    lane.next_reply = 0;
    spdlog::debug("{}: lane {} connected from {}", name_, binding->lane, request.peer);
}

void FabricTarget::on_receive(const SlotContext& slot, std::size_t length) {
    Lane& lane = lanes_[slot.lane];
    if (!lane.endpoint)
        return;
    const std::size_t offset = receive_offset(slot.lane, slot.index);
    auto outcome = handler_->handle({buffers_.data() + offset, std::min(length, slot_size_)});

    if (outcome.close_lane) {
        if (outcome.reply)
            send_reply(slot.lane, *outcome.reply);
        close_lane(slot.lane, fmt::format("malformed persist message (status {})",
                                          outcome.reply ? outcome.reply->status : 0));
        return;
    }
    // The buffer is free again: repost it before answering, so the initiator's next message
    // (which our reply allows) always finds it.
    auto posted = lane.endpoint->post_receive(*buffer_region_, offset, slot_size_,
                                              const_cast<SlotContext*>(&slot));
    if (!posted) {
        close_lane(slot.lane, posted.error().message());
        return;
    }
    if (outcome.reply)
        send_reply(slot.lane, *outcome.reply);
}

void FabricTarget::send_reply(unsigned lane_index, const persist::Reply& reply) {
    Lane& lane = lanes_[lane_index];
    SlotContext& slot = lane.replies[lane.next_reply];
    if (slot.busy) {
        // More replies in flight than the credits allow: the initiator broke the protocol.
        close_lane(lane_index, "reply buffers exhausted");
        return;
    }
    lane.next_reply = (lane.next_reply + 1) % kReplySlots;
    const std::size_t offset = reply_offset(lane_index, slot.index);
    persist::encode(reply, {buffers_.data() + offset, persist::kReplySize});

    const auto deadline = fabric::deadline_after(std::chrono::seconds(1));
    for (;;) {
        auto sent = lane.endpoint->send(*buffer_region_, offset, persist::kReplySize,
                                        fabric::Signal::yes, &slot);
        if (sent) {
            slot.busy = true;
            return;
        }
        // A lane's first message can arrive before its FI_CONNECTED event was read.
        if (sent.error().errno_value() != ENOTCONN || fabric::Clock::now() >= deadline) {
            close_lane(lane_index, sent.error().message());
            return;
        }
        (void)events_->pump(std::chrono::milliseconds(1));
    }
}

void FabricTarget::close_lane(unsigned lane_index, std::string_view why) {
    Lane& lane = lanes_[lane_index];
    if (!lane.endpoint)
        return;
    spdlog::info("{}: lane {} closed: {}", name_, lane_index, why);
    (void)lane.endpoint->shutdown();
    lane.endpoint.reset();
    lane.retired = true;
    for (SlotContext& reply : lane.replies)
        reply.busy = false;
}

} // namespace

Result<std::unique_ptr<DataPlane>> start_fabric_target(const DataPlaneRequest& request,
                                                       std::unique_ptr<persist::TargetPool> pool) {
    auto target = FabricTarget::start(request, std::move(pool));
    if (!target)
        return fail(
            std::move(target.error())
                .add_context(fmt::format("{}: starting the data plane", request.session_name)));
    return std::unique_ptr<DataPlane>(std::move(*target));
}

Result<std::unique_ptr<DataPlane>> start_fabric_target(const DataPlaneRequest& request) {
    if (request.pool == nullptr)
        return fail(EINVAL, request.session_name + ": starting the data plane: no pool");
    return start_fabric_target(request, std::make_unique<MappedPool>(*request.pool));
}

} // namespace rpmem::daemon
