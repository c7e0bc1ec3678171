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
#include "fabric/endpoint.h"
#include "fabric/memory_region.h"
#include "fabric/passive_endpoint.h"
#include "fabric/stack.h"
#include "fabric/waiter.h"
#include "persist/request_handler.h"
#include "persist/target_lane.h"
#include "protocol/lane_binding.h"

namespace rpmem::daemon {

namespace {

constexpr std::size_t kPage = 4096;
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

// The provider the client asked for (or the one rule's choice), within the operator's list.
Result<std::unique_ptr<fabric::Stack>> open_stack(const DataPlaneRequest& request) {
    fabric::ProviderRequest wanted{.name = request.provider == protocol::ProviderPreference::any
                                               ? std::string()
                                               : std::string(protocol::name_of(request.provider)),
                                   .role = fabric::Role::listener,
                                   .node = request.bind_host,
                                   .service = "0",
                                   .allowed = request.allowed_providers};
    auto stack = fabric::Stack::open(wanted);
    if (!stack)
        return fail(EMEDIUMTYPE,
                    fmt::format("no usable fabric provider for {}: {}",
                                request.bind_host.empty() ? "any address" : request.bind_host,
                                stack.error().message()));
    return stack;
}

// The fabric half of one session; see start_fabric_target(). Members are declared parent
// before child so that they close child first: lanes (endpoints) before the regions, queue,
// listener and stack.
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
        if (completions_)
            completions_->signal();
        if (responder_.joinable())
            responder_.join();
        for (auto& lane : lanes_)
            lane->shutdown();
        spdlog::debug("{}: data plane stopped", name_);
    }

private:
    FabricTarget(const DataPlaneRequest& request, std::unique_ptr<persist::TargetPool> pool,
                 std::unique_ptr<fabric::Stack> stack)
        : name_(request.session_name)
        , token_(request.token)
        , pool_(std::move(pool))
        , counters_(request.counters)
        , protected_prefix_(request.protected_prefix)
        , responder_spin_(request.responder_spin)
        , responder_cpu_(request.responder_cpu)
        , stack_(std::move(stack))
        , lane_stride_(persist::TargetLane::buffer_size(protocol::kDefaultInlineSize))
        , lane_count_(static_cast<unsigned>(
              std::min<std::size_t>(request.lanes, stack_->capabilities().max_endpoints != 0
                                                       ? stack_->capabilities().max_endpoints
                                                       : 1)))
        , buffers_(lane_count_ * lane_stride_) {}

    Result<void> open(const DataPlaneRequest& request);
    void run();
    void serve() noexcept;
    void admit(fabric::ConnectionRequest& request);

    std::string name_;
    protocol::SessionToken token_;
    std::unique_ptr<persist::TargetPool> pool_;   // parent of the region registered over it
    std::shared_ptr<SharedCounterPage> counters_; // the lanes count there; may be null
    std::size_t protected_prefix_;
    std::chrono::nanoseconds responder_spin_;
    int responder_cpu_;
    DataPlaneInfo info_;

    std::unique_ptr<fabric::Stack> stack_;
    std::size_t lane_stride_;
    unsigned lane_count_;
    std::unique_ptr<fabric::CompletionQueue> completions_;
    std::optional<fabric::PassiveEndpoint> listener_;
    std::optional<fabric::MemoryRegion> pool_region_;
    AlignedBuffer buffers_;
    std::optional<fabric::MemoryRegion> buffer_region_;
    std::vector<std::unique_ptr<persist::TargetLane>> lanes_;

    std::thread responder_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> stopped_{false};
};

Result<std::unique_ptr<FabricTarget>>
FabricTarget::start(const DataPlaneRequest& request, std::unique_ptr<persist::TargetPool> pool) {
    if (pool == nullptr || request.lanes == 0 || request.protected_prefix >= pool->bytes().size())
        return fail(EINVAL, "starting the data plane: no pool, no data in it or no lanes");
    auto stack = open_stack(request);
    if (!stack)
        return fail(std::move(stack.error()));
    std::unique_ptr<FabricTarget> target(
        new FabricTarget(request, std::move(pool), std::move(*stack)));
    if (auto opened = target->open(request); !opened)
        return fail(std::move(opened.error()));
    target->responder_ = std::thread([raw = target.get()] { raw->serve(); });
    return target;
}

Result<void> FabricTarget::open(const DataPlaneRequest& request) {
    const fabric::Capabilities& caps = stack_->capabilities();
    if (buffers_.data() == nullptr)
        return fail(ENOMEM, "allocating the lanes' message buffers");

    // Every lane: its receives and its reply sends, plus room for the RMA traffic the
    // provider may report.
    auto completions = fabric::CompletionQueue::open(
        stack_->domain(),
        lane_count_ * (protocol::kLaneCredits + persist::TargetLane::kReplySlots) + 64);
    if (!completions)
        return fail(std::move(completions.error()).add_context("opening the completion queue"));
    completions_ = std::move(*completions);

    // Only the pool's data is exposed, never its header: the provider refuses an RMA write at
    // offset 0 instead of letting it relabel the pool. (Containment of a hostile client does
    // not rest on the provider's bounds check, see rpmemd/worker/: this only keeps the honest
    // path narrow.)
    std::span<std::byte> data = pool_->bytes().subspan(protected_prefix_);
    auto pool_region = fabric::MemoryRegion::register_memory(
        stack_->domain(), data.data(), data.size(),
        fabric::access::kRemoteRead | fabric::access::kRemoteWrite);
    if (!pool_region)
        return fail(std::move(pool_region.error()).add_context("registering the pool"));
    pool_region_.emplace(std::move(*pool_region));

    auto buffer_region = fabric::MemoryRegion::register_memory(
        stack_->domain(), buffers_.data(), buffers_.size(),
        fabric::access::kReceiveTarget | fabric::access::kSendSource);
    if (!buffer_region)
        return fail(std::move(buffer_region.error()).add_context("registering message buffers"));
    buffer_region_.emplace(std::move(*buffer_region));

    auto listener =
        fabric::PassiveEndpoint::listen(stack_->fabric(), stack_->info(), stack_->events());
    if (!listener)
        return fail(std::move(listener.error()).add_context("listening for lanes"));
    listener_.emplace(std::move(*listener));

    for (unsigned lane = 0; lane < lane_count_; ++lane)
        lanes_.push_back(std::make_unique<persist::TargetLane>(
            lane, *pool_, protocol::kDefaultInlineSize, protected_prefix_, *buffer_region_,
            lane * lane_stride_, stack_->events(), name_,
            counters_ ? &counters_->page() : nullptr));

    fabric::RemoteRegion remote = pool_region_->remote();
    protocol::DataPath& path = info_.path;
    path.provider = caps.provider;
    // A wildcard bind is dialled at the host the client reached over TLS.
    bool wildcard =
        request.bind_host.empty() || request.bind_host == "0.0.0.0" || request.bind_host == "::";
    path.host = wildcard ? std::string() : request.bind_host;
    path.port = listener_->port();
    // The client names pool offsets: offset 0 lies protected_prefix_ before the region (the
    // sum wraps for offset addressing, where the region starts at 0; unsigned, so well defined).
    path.remote_base = remote.address - protected_prefix_;
    path.remote_key = remote.key;
    path.offset_addressing = !caps.mr_virt_addr;
    path.lanes = lane_count_;
    path.inline_buffer_size = static_cast<std::uint32_t>(protocol::kDefaultInlineSize);
    info_.traits = {.software = caps.software, .offers_rma_pmem = caps.rma_pmem};
    spdlog::info("{}: data plane on {} ({}), {} lanes, {} pool bytes registered from offset {}",
                 name_, listener_->address(), caps.provider, lane_count_, data.size(),
                 protected_prefix_);
    return {};
}

void FabricTarget::serve() noexcept {
    // Nothing below should throw; if it does (an allocation in a log line), this session's
    // data plane ends rather than the process.
    try {
        run();
    } catch (const std::exception& e) {
        spdlog::error("{}: the data plane's responder failed: {}", name_, e.what());
    } catch (...) {
        spdlog::error("{}: the data plane's responder failed", name_);
    }
}

void FabricTarget::run() {
    if (responder_cpu_ >= 0) {
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        CPU_SET(responder_cpu_, &cpus);
        if (pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0)
            spdlog::warn("{}: cannot pin the responder to CPU {}", name_, responder_cpu_);
    }
    fabric::Waiter waiter(stack_->fabric().get(), fabric::WaitPolicy{responder_spin_, kSlice});
    std::array<fabric::Completion, 32> completions;
    while (!stop_.load(std::memory_order_acquire)) {
        auto read = waiter.wait(*completions_, completions, &stack_->events(), nullptr,
                                fabric::deadline_after(kSlice));
        if (!read) {
            const fabric::CompletionError& failure = read.error();
            if (auto* lane = persist::TargetLane::owner_of(failure.context))
                lane->on_failure(failure);
            else if (failure.error.errno_value() != ETIMEDOUT)
                spdlog::debug("{}: waiting for completions: {}", name_, failure.error.message());
        } else {
            for (std::size_t i = 0; i < *read; ++i) {
                if (auto* lane = persist::TargetLane::owner_of(completions[i].context))
                    lane->on_completion(completions[i]);
            }
        }
        while (auto request = stack_->events().take_request())
            admit(*request);
        for (auto& lane : lanes_)
            lane->check_connection();
    }
}

void FabricTarget::admit(fabric::ConnectionRequest& request) {
    auto refuse = [&](std::string_view why) {
        spdlog::warn("{}: refused a lane connection from {}: {}", name_, request.peer, why);
        (void)listener_->reject(request);
    };
    auto binding = protocol::decode_lane_binding(request.private_data);
    if (!binding)
        return refuse(binding.error().message());
    if (!protocol::same_token(binding->token, token_))
        return refuse("wrong session token");
    if (binding->lane >= lanes_.size())
        return refuse(
            fmt::format("lane {} was not granted ({} were)", binding->lane, lanes_.size()));
    persist::TargetLane& lane = *lanes_[binding->lane];
    if (lane.connected())
        return refuse(fmt::format("lane {} is already connected", binding->lane));

    fabric::EndpointOptions options;
    options.rx_depth = protocol::kLaneCredits;
    options.tx_depth = persist::TargetLane::kReplySlots;
    options.peer = request.peer;
    auto endpoint = fabric::Endpoint::create_shared(stack_->domain(), *request.info,
                                                    stack_->events(), *completions_, options);
    if (!endpoint)
        return refuse(endpoint.error().message());
    if (auto accepted = lane.accept(std::move(*endpoint)); !accepted)
        return refuse(accepted.error().message());
    spdlog::debug("{}: lane {} connected from {}", name_, binding->lane, request.peer);
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
