// SPDX-License-Identifier: BSD-3-Clause
#include "raw_target.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cpu_affinity.h"

namespace rpmem::bench {

using namespace rpmem::fabric;

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kLaneDepth = 16;
constexpr std::size_t kMessageSlot = 64; // request and reply buffers, cache-line apart

} // namespace

RawTarget::RawTarget(RawTargetConfig config, std::unique_ptr<Stack> stack)
    : config_(std::move(config))
    , stack_(std::move(stack)) {}

Result<std::unique_ptr<RawTarget>> RawTarget::start(const RawTargetConfig& config) {
    auto stack = Stack::open({config.provider, Role::listener, config.address, "0", {}});
    if (!stack)
        return fail(std::move(stack.error()));
    std::unique_ptr<RawTarget> target(new RawTarget(config, std::move(*stack)));
    if (auto opened = target->open_resources(); !opened)
        return fail(std::move(opened.error().add_context("starting the benchmark target")));
    target->thread_ = std::thread([raw = target.get()] { raw->run(); });
    return target;
}

Result<void> RawTarget::open_resources() {
    auto completions = CompletionQueue::open(stack_->domain(), config_.max_lanes * 2 * kLaneDepth);
    if (!completions)
        return fail(std::move(completions.error()));
    completions_ = std::move(*completions);

    auto memory = PageBuffer::allocate(config_.region_size);
    auto messages = PageBuffer::allocate(config_.max_lanes * 2 * kMessageSlot);
    if (!memory || !messages)
        return fail(ENOMEM, "allocating the target's memory", ErrorSource::system, ENOMEM);
    memory_ = std::move(*memory);
    messages_ = std::move(*messages);
    auto region =
        MemoryRegion::register_memory(stack_->domain(), memory_.data(), config_.region_size,
                                      access::kRemoteRead | access::kRemoteWrite);
    if (!region)
        return fail(std::move(region.error()));
    region_.emplace(std::move(*region));
    auto message_region = MemoryRegion::register_memory(
        stack_->domain(), messages_.data(), config_.max_lanes * 2 * kMessageSlot,
        access::kSendSource | access::kReceiveTarget);
    if (!message_region)
        return fail(std::move(message_region.error()));
    message_region_.emplace(std::move(*message_region));

    auto listener = PassiveEndpoint::listen(stack_->fabric(), stack_->info(), stack_->events());
    if (!listener)
        return fail(std::move(listener.error()));
    listener_.emplace(std::move(*listener));
    return {};
}

RawTarget::~RawTarget() {
    stop_ = true;
    if (thread_.joinable())
        thread_.join();
    lanes_.clear(); // endpoints before the queues and regions they use
}

std::optional<Error> RawTarget::failure() const {
    const std::lock_guard lock(failure_mutex_);
    return failure_;
}

void RawTarget::record(const Error& error) {
    const std::lock_guard lock(failure_mutex_);
    if (!failure_)
        failure_ = error;
}

void RawTarget::accept_requests() {
    while (auto request = stack_->events().take_request()) {
        if (lanes_.size() >= config_.max_lanes) {
            (void)listener_->reject(*request);
            continue;
        }
        EndpointOptions options;
        options.tx_depth = kLaneDepth;
        options.rx_depth = kLaneDepth;
        options.peer = request->peer;
        auto endpoint = SharedQueueEndpoint::create(stack_->domain(), *request->info,
                                                    stack_->events(), *completions_, options);
        if (!endpoint) {
            record(endpoint.error());
            continue;
        }
        auto lane = std::make_unique<Lane>(Lane{std::move(*endpoint), lanes_.size()});
        const std::size_t offset = lane->index * 2 * kMessageSlot;
        auto posted =
            lane->endpoint.post_receive(*message_region_, offset, kRequestSize, lane.get());
        if (posted)
            posted = lane->endpoint.accept();
        if (!posted) {
            record(posted.error());
            continue;
        }
        lanes_.push_back(std::move(lane));
    }
}

void RawTarget::answer(Lane& lane) {
    const std::size_t offset = lane.index * 2 * kMessageSlot;
    // Repost first: the next request may follow the reply at once.
    if (auto posted = lane.endpoint.post_receive(*message_region_, offset, kRequestSize, &lane);
        !posted) {
        record(posted.error());
        return;
    }
    for (int attempt = 0;; ++attempt) {
        auto sent = lane.endpoint.send(*message_region_, offset + kMessageSlot, kReplySize,
                                       &lane.reply_tag);
        if (sent)
            return;
        // A lane's first request can beat its FI_CONNECTED here; anything else is a failure.
        if (sent.error().errno_value() != ENOTCONN || attempt > 1000) {
            record(sent.error());
            return;
        }
        (void)stack_->events().pump(std::chrono::milliseconds(1));
    }
}

void RawTarget::run() {
    if (config_.cpu >= 0)
        pin_current_thread(config_.cpu);
    Waiter waiter(stack_->fabric().get());
    std::array<Completion, 16> completions;
    while (!stop_.load(std::memory_order_relaxed)) {
        accept_requests();
        const std::int64_t spin = spin_ns_.load(std::memory_order_relaxed);
        waiter.set_policy(
            WaitPolicy{spin < 0 ? WaitPolicy::kSpinForever : std::chrono::nanoseconds(spin),
                       std::chrono::milliseconds(20)});
        // A short deadline: the loop comes round to look at requests and the stop flag.
        auto read = waiter.wait(*completions_, completions, &stack_->events(), nullptr,
                                deadline_after(std::chrono::milliseconds(20)));
        if (!read) {
            const CompletionError& failure = read.error();
            if (failure.context == nullptr && failure.error.errno_value() != ETIMEDOUT)
                record(failure.error);
            continue; // a lane's failure (its client went away) is not the target's
        }
        for (std::size_t i = 0; i < *read; ++i) {
            if ((completions[i].flags & FI_RECV) != 0)
                answer(*static_cast<Lane*>(completions[i].context));
        }
    }
}

} // namespace rpmem::bench
