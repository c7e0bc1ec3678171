// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/worker/fabric_target.h"

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
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/page_buffer.h"
#include "base/unique_fd.h"
#include "fabric/completion_queue.h"
#include "fabric/memory_region.h"
#include "fabric/passive_endpoint.h"
#include "fabric/port_sockets.h"
#include "fabric/shared_queue_endpoint.h"
#include "fabric/stack.h"
#include "persist/request_handler.h"
#include "persist/target_lane.h"
#include "protocol/lane_binding.h"
#include "rpmemd/worker/responder_pool.h"

namespace rpmem::daemon {

namespace {

constexpr std::chrono::milliseconds kSlice{50};
// How long closing a listener waits for the provider to let go of the connections it holds.
constexpr std::chrono::milliseconds kListenerDrain{2000};

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
// listener and stack. Served by a thread of `responders` (ResponderPool) from start() to stop().
class FabricTarget final : public DataPlane, public Responsive {
public:
    static Result<std::unique_ptr<FabricTarget>> start(const DataPlaneRequest& request,
                                                       std::unique_ptr<persist::TargetPool> pool,
                                                       ResponderPool* responders);

    ~FabricTarget() override {
        stop();
        close_listener();
    }

    const DataPlaneInfo& info() const noexcept override { return info_; }

    void stop() noexcept override {
        if (stopped_.exchange(true))
            return;
        if (attached_)
            responders_->detach(*this);
        // What the lanes' queue holds is read first: an initiator that disconnected before it
        // closed the session (librpmem does) is logged as such, not lost in the shutdown.
        try {
            (void)handle(completions_->read(batch_));
        } catch (...) {
        }
        // A lane whose end the provider has not reported yet (its cancelled receives can come
        // after the close request that stops us) is closed here, and says so.
        for (auto& lane : lanes_) {
            if (lane->connected())
                lane->close("the session ended");
            lane->shutdown();
        }
        spdlog::debug("{}: data plane stopped", name_);
    }

    std::size_t poll(bool events_ready) override;
    Arm arm(std::vector<pollfd>& fds) override;
    std::size_t block(std::chrono::milliseconds timeout) override;
    const std::string& name() const noexcept override { return name_; }

private:
    FabricTarget(const DataPlaneRequest& request, std::unique_ptr<persist::TargetPool> pool,
                 std::unique_ptr<fabric::Stack> stack)
        : name_(request.session_name)
        , token_(request.token)
        , pool_(std::move(pool))
        , counters_(request.counters)
        , protected_prefix_(request.protected_prefix)
        , reply_delay_(request.reply_delay)
        , stack_(std::move(stack))
        , lane_stride_(persist::TargetLane::buffer_size(protocol::kDefaultInlineSize))
        , lane_count_(static_cast<unsigned>(
              std::min<std::size_t>(request.lanes, stack_->capabilities().max_endpoints != 0
                                                       ? stack_->capabilities().max_endpoints
                                                       : 1))) {}

    Result<void> open(const DataPlaneRequest& request);
    Result<void> open_reply_timer();
    std::size_t handle(const fabric::CompletionResult& read);
    std::size_t send_due_replies();
    bool arm_reply_timer(std::vector<pollfd>& fds);
    std::size_t take_events();
    void admit(fabric::ConnectionRequest& request);
    void close_listener() noexcept;

    std::string name_;
    protocol::SessionToken token_;
    std::unique_ptr<persist::TargetPool> pool_;   // parent of the region registered over it
    std::shared_ptr<SharedCounterPage> counters_; // the lanes count there; may be null
    std::size_t protected_prefix_;
    std::chrono::nanoseconds reply_delay_;
    // With a reply delay: readable when the lanes' first held reply falls due.
    UniqueFd reply_timer_;
    DataPlaneInfo info_;

    // A pool of its own when the caller has none (in-process use), declared before the
    // fabric objects so that its thread is gone before they close.
    std::unique_ptr<ResponderPool> own_responders_;
    ResponderPool* responders_ = nullptr;
    LaneGate* gate_ = nullptr;  // responders_'s: closes connections that never became lanes
    bool tcp_listener_ = false; // the listener is the tcp provider's (close_listener)
    bool attached_ = false;

    std::unique_ptr<fabric::Stack> stack_;
    std::size_t lane_stride_;
    unsigned lane_count_;
    std::unique_ptr<fabric::CompletionQueue> completions_;
    std::optional<fabric::PassiveEndpoint> listener_;
    std::optional<fabric::MemoryRegion> pool_region_;
    PageBuffer buffers_; // the lanes' message buffers, lane_stride_ each
    std::optional<fabric::MemoryRegion> buffer_region_;
    std::vector<std::unique_ptr<persist::TargetLane>> lanes_;
    std::array<fabric::Completion, 32> batch_;

    std::atomic<bool> stopped_{false};
};

Result<std::unique_ptr<FabricTarget>> FabricTarget::start(const DataPlaneRequest& request,
                                                          std::unique_ptr<persist::TargetPool> pool,
                                                          ResponderPool* responders) {
    if (pool == nullptr || request.lanes == 0 || request.protected_prefix >= pool->bytes().size())
        return fail(EINVAL, "starting the data plane: no pool, no data in it or no lanes");
    auto stack = open_stack(request);
    if (!stack)
        return fail(std::move(stack.error()));
    std::unique_ptr<FabricTarget> target(
        new FabricTarget(request, std::move(pool), std::move(*stack)));
    if (auto opened = target->open(request); !opened)
        return fail(std::move(opened.error()));
    if (responders == nullptr) {
        target->own_responders_ =
            std::make_unique<ResponderPool>(ResponderOptions{.threads = 1,
                                                             .spin = request.responder_spin,
                                                             .cpu = request.responder_cpu,
                                                             .slice = kSlice});
        responders = target->own_responders_.get();
    }
    target->responders_ = responders;
    // The tcp provider's listener needs the gate (lib/fabric/README.md, "Listeners"); the
    // sockets provider hands its lanes other sockets on the same port than the ones their
    // requests came on, which the gate could not tell from strays.
    if (target->tcp_listener_) {
        target->gate_ = &responders->lane_gate();
        target->gate_->open_port(target->listener_->port(), target->name_, target->lane_count_);
    }
    if (auto attached = responders->attach(*target); !attached)
        return fail(std::move(attached.error()));
    target->attached_ = true;
    return target;
}

Result<void> FabricTarget::open(const DataPlaneRequest& request) {
    const fabric::Capabilities& caps = stack_->capabilities();
    auto buffers = PageBuffer::allocate(lane_count_ * lane_stride_);
    if (!buffers)
        return fail(std::move(buffers.error()).add_context("the lanes' message buffers"));
    buffers_ = std::move(*buffers);

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
    tcp_listener_ = caps.provider == "tcp";

    for (unsigned lane = 0; lane < lane_count_; ++lane)
        lanes_.push_back(std::make_unique<persist::TargetLane>(
            lane, *pool_, protocol::kDefaultInlineSize, protected_prefix_, *buffer_region_,
            lane * lane_stride_, name_, counters_ ? &counters_->page() : nullptr, reply_delay_));
    if (reply_delay_.count() > 0) {
        if (auto timer = open_reply_timer(); !timer)
            return timer;
        spdlog::warn("{}: every reply is held back {} us (inject-reply-delay)", name_,
                     std::chrono::duration_cast<std::chrono::microseconds>(reply_delay_).count());
    }

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

Result<void> FabricTarget::open_reply_timer() {
    reply_timer_ = UniqueFd(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    if (reply_timer_.get() < 0)
        return fail(Error::from_errno(errno, "creating the reply delay's timer"));
    return {};
}

// The replies whose delay is over. The timer's expirations are read first, so that a level-
// triggered wait does not see it readable again for the same deadline.
std::size_t FabricTarget::send_due_replies() {
    std::uint64_t expirations = 0;
    [[maybe_unused]] auto n = ::read(reply_timer_.get(), &expirations, sizeof expirations);
    const auto now = persist::TargetLane::Clock::now();
    std::size_t sent = 0;
    for (auto& lane : lanes_)
        sent += lane->send_due_replies(now);
    return sent;
}

// Sets the timer to the first held reply's due time and appends it; false when one is due
// already (do not block).
bool FabricTarget::arm_reply_timer(std::vector<pollfd>& fds) {
    std::optional<persist::TargetLane::Clock::time_point> first;
    for (const auto& lane : lanes_)
        if (auto due = lane->next_due(); due && (!first || *due < *first))
            first = due;
    itimerspec when{};
    if (first) {
        // steady_clock is CLOCK_MONOTONIC on Linux, the timer's clock.
        const auto since_epoch =
            std::chrono::duration_cast<std::chrono::nanoseconds>(first->time_since_epoch());
        if (*first <= persist::TargetLane::Clock::now())
            return false;
        when.it_value.tv_sec = static_cast<time_t>(since_epoch.count() / 1'000'000'000);
        when.it_value.tv_nsec = static_cast<long>(since_epoch.count() % 1'000'000'000);
    } // else all zero: disarmed
    (void)::timerfd_settime(reply_timer_.get(), TFD_TIMER_ABSTIME, &when, nullptr);
    fds.push_back({reply_timer_.get(), POLLIN, 0});
    return true;
}

std::size_t FabricTarget::handle(const fabric::CompletionResult& read) {
    if (!read) {
        const fabric::CompletionError& failure = read.error();
        if (auto* lane = persist::TargetLane::owner_of(failure.context))
            lane->on_failure(failure);
        else if (failure.error.errno_value() != ETIMEDOUT)
            spdlog::debug("{}: reading completions: {}", name_, failure.error.message());
        return 1;
    }
    for (std::size_t i = 0; i < *read; ++i) {
        if (auto* lane = persist::TargetLane::owner_of(batch_[i].context))
            lane->on_completion(batch_[i]);
    }
    return *read;
}

std::size_t FabricTarget::take_events() {
    // libfabric 1.17's tcp provider takes a stale errno of EAGAIN for "come back later" when a
    // connection it holds ends before its connection request, and then keeps it for good: the
    // responder's errno is EAGAIN from its nonblocking reads (lib/fabric/README.md).
    errno = 0;
    auto pumped = stack_->events().pump();
    if (!pumped)
        spdlog::debug("{}: reading connection events: {}", name_, pumped.error().message());
    std::size_t work = pumped ? *pumped : 0;
    while (auto request = stack_->events().take_request())
        admit(*request);
    for (auto& lane : lanes_)
        lane->check_connection();
    return work;
}

std::size_t FabricTarget::poll(bool events_ready) {
    // Reading the queue is also what moves the provider's RMA traffic (tcp, sockets).
    std::size_t work = handle(completions_->read(batch_));
    if (events_ready)
        work += take_events();
    if (reply_timer_.get() >= 0)
        work += send_due_replies();
    return work;
}

Responsive::Arm FabricTarget::arm(std::vector<pollfd>& fds) {
    const int cq_fd = completions_->wait_fd();
    if (cq_fd < 0)
        return Arm::no_wait;
    fabric::EventQueue& events = stack_->events();
    const bool with_events = events.wait_fd() >= 0;
    fid* fids[2] = {&completions_->get()->fid, with_events ? &events.get()->fid : nullptr};
    const int ret = fi_trywait(stack_->fabric().get(), fids, with_events ? 2 : 1);
    if (ret == -FI_EAGAIN)
        return Arm::ready;
    if (ret != 0)
        return Arm::no_wait;
    fds.push_back({cq_fd, POLLIN, 0});
    if (with_events)
        fds.push_back({events.wait_fd(), POLLIN, 0});
    // Always appended when there is a delay (the responder watches the same descriptors for
    // as long as the session is attached); disarmed while nothing is held.
    if (reply_timer_.get() >= 0 && !arm_reply_timer(fds))
        return Arm::ready;
    return Arm::armed;
}

std::size_t FabricTarget::block(std::chrono::milliseconds timeout) {
    // A provider without descriptors: the block ends by the first held reply's due time
    // (rounded up to the millisecond the provider's wait counts in).
    for (const auto& lane : lanes_) {
        if (auto due = lane->next_due()) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(
                *due - persist::TargetLane::Clock::now());
            timeout = std::clamp(left, std::chrono::milliseconds::zero(), timeout);
        }
    }
    std::size_t work = handle(completions_->read_blocking(batch_, timeout));
    if (reply_timer_.get() >= 0)
        work += send_due_replies();
    return work + take_events();
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
    auto endpoint = fabric::SharedQueueEndpoint::create(stack_->domain(), *request.info,
                                                        stack_->events(), *completions_, options);
    if (!endpoint)
        return refuse(endpoint.error().message());
    if (auto accepted = lane.accept(std::move(*endpoint)); !accepted)
        return refuse(accepted.error().message());
    if (gate_ != nullptr)
        gate_->admit(listener_->port(), binding->lane, request.info->dest_addr,
                     request.info->dest_addrlen);
    spdlog::debug("{}: lane {} connected from {}", name_, binding->lane, request.peer);
}

// Closes the listener so that nothing of it outlives the session. The lanes go first (their
// sockets with them). Then the provider must let go of every connection it accepted but did
// not hand over: libfabric 1.17's tcp provider frees such a connection only when the peer
// speaks or fails, never when the listener closes, and one that speaks after the close makes it
// use the freed listener (lib/fabric/README.md, "Listeners"). So: no new connections (the
// listening socket is shut down), every remaining one shut down, requests that arrived
// rejected, and the provider's progress run until it closed them all, within kListenerDrain.
void FabricTarget::close_listener() noexcept {
    if (!listener_ || !tcp_listener_)
        return;
    const std::uint16_t port = listener_->port();
    if (gate_ != nullptr)
        gate_->close_port(port);
    lanes_.clear();
    listener_->stop_listening();
    const auto until = std::chrono::steady_clock::now() + kListenerDrain;
    for (;;) {
        errno = 0; // see take_events()
        (void)stack_->events().pump();
        while (auto request = stack_->events().take_request())
            (void)listener_->reject(*request);
        auto sockets = fabric::tcp_sockets();
        if (!sockets)
            break;
        std::size_t held = 0;
        for (const fabric::PortSocket& socket : *sockets) {
            if (socket.listening || socket.local_port != port ||
                listener_->is_stopped_listener(socket))
                continue;
            ++held;
            (void)fabric::shut_down(socket);
        }
        if (held == 0)
            break;
        if (std::chrono::steady_clock::now() >= until) {
            spdlog::warn("{}: the fabric provider still holds {} connection(s) to the data port "
                         "{} ms after it closed",
                         name_, held, kListenerDrain.count());
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    listener_.reset();
}

} // namespace

Result<std::unique_ptr<DataPlane>> start_fabric_target(const DataPlaneRequest& request,
                                                       std::unique_ptr<persist::TargetPool> pool,
                                                       ResponderPool* responders) {
    auto target = FabricTarget::start(request, std::move(pool), responders);
    if (!target)
        return fail(
            std::move(target.error())
                .add_context(fmt::format("{}: starting the data plane", request.session_name)));
    return std::unique_ptr<DataPlane>(std::move(*target));
}

std::unique_ptr<persist::TargetPool> target_pool_of(const poolset::PoolMapping& mapping) {
    return std::make_unique<MappedPool>(mapping);
}

Result<std::unique_ptr<DataPlane>> start_fabric_target(const DataPlaneRequest& request) {
    if (request.pool == nullptr)
        return fail(EINVAL, request.session_name + ": starting the data plane: no pool");
    return start_fabric_target(request, target_pool_of(*request.pool), nullptr);
}

} // namespace rpmem::daemon
