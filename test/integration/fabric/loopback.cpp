// SPDX-License-Identifier: BSD-3-Clause
#include "loopback.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include <catch2/catch.hpp>
#include <rdma/fabric.h>

namespace rpmem::fabric::test {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kLaneDepth = 8;

std::size_t round_up(std::size_t size) {
    return (size + kPage - 1) / kPage * kPage;
}

} // namespace

AlignedBuffer::AlignedBuffer(std::size_t size)
    : data_(static_cast<std::byte*>(std::aligned_alloc(kPage, round_up(size))))
    , size_(size) {
    if (data_ == nullptr)
        throw std::bad_alloc();
    std::memset(data_, 0, round_up(size));
}

AlignedBuffer::~AlignedBuffer() {
    std::free(data_);
}

Side Side::open(const ProviderRequest& request) {
    Provider provider = must(select_provider(request));
    Fabric fabric = must(Fabric::open(*provider.info));
    Domain domain = must(Domain::open(fabric, *provider.info));
    std::unique_ptr<EventQueue> events = must(EventQueue::open(fabric));
    return Side{std::move(provider), std::move(fabric), std::move(domain), std::move(events)};
}

LoopbackTarget::LoopbackTarget(TargetOptions options)
    : options_(std::move(options))
    , side_(Side::open(ProviderRequest{options_.provider, Role::listener, "127.0.0.1", "0"}))
    , completions_(
          must(CompletionQueue::open(side_.domain, options_.max_connections * 2 * kLaneDepth)))
    , memory_(options_.region_size)
    , messages_(options_.max_connections * 2 * kMessageSize) {
    region_.emplace(must(MemoryRegion::register_memory(
        side_.domain, memory_.data(), memory_.size(), access::kRemoteRead | access::kRemoteWrite)));
    message_region_.emplace(
        must(MemoryRegion::register_memory(side_.domain, messages_.data(), messages_.size(),
                                           access::kSendSource | access::kReceiveTarget)));
    listener_.emplace(
        must(PassiveEndpoint::listen(side_.fabric, *side_.provider.info, *side_.events)));
    thread_ = std::thread([this] { run(); });
}

LoopbackTarget::~LoopbackTarget() {
    stop_ = true;
    if (thread_.joinable())
        thread_.join();
    lanes_.clear(); // endpoints before the queues and regions they use
}

std::string LoopbackTarget::failure() const {
    const std::lock_guard lock(failure_mutex_);
    return failure_;
}

void LoopbackTarget::record(const Error& error) {
    const std::lock_guard lock(failure_mutex_);
    if (failure_.empty())
        failure_ = error.message();
}

void LoopbackTarget::serve_requests() {
    while (auto request = side_.events->take_request()) {
        if (lanes_.size() >= options_.max_connections || !options_.accept(request->private_data)) {
            ++rejected_;
            if (auto rejected = listener_->reject(*request); !rejected)
                record(rejected.error());
            continue;
        }
        EndpointOptions lane_options;
        lane_options.tx_depth = kLaneDepth;
        lane_options.rx_depth = kLaneDepth;
        lane_options.peer = request->peer;
        auto endpoint = SharedQueueEndpoint::create(side_.domain, *request->info, *side_.events,
                                                    *completions_, lane_options);
        if (!endpoint) {
            record(endpoint.error());
            continue;
        }
        auto lane = std::make_unique<Lane>(Lane{std::move(*endpoint), lanes_.size()});
        const std::size_t offset = lane->index * 2 * kMessageSize;
        if (auto posted =
                lane->endpoint.post_receive(*message_region_, offset, kMessageSize, lane.get());
            !posted) {
            record(posted.error());
            continue;
        }
        ++accepted_; // before the connector can learn of it
        if (auto accepted = lane->endpoint.accept(); !accepted) {
            --accepted_;
            record(accepted.error());
            continue;
        }
        lanes_.push_back(std::move(lane));
    }
}

void LoopbackTarget::answer(Lane& lane) {
    const std::size_t offset = lane.index * 2 * kMessageSize;
    std::byte* received = messages_.data() + offset;
    std::byte* reply = received + kMessageSize;
    for (std::size_t i = 0; i < kMessageSize; ++i)
        reply[i] = std::byte(static_cast<unsigned char>(received[i]) + 1);
    if (auto posted = lane.endpoint.post_receive(*message_region_, offset, kMessageSize, &lane);
        !posted) {
        record(posted.error());
        return;
    }
    const Deadline deadline = deadline_after(std::chrono::seconds(5));
    for (;;) {
        auto sent = lane.endpoint.send(*message_region_, offset + kMessageSize, kMessageSize,
                                       &lane.reply_tag);
        if (sent)
            return;
        // The first message of a lane may come before its FI_CONNECTED was read here.
        if (sent.error().errno_value() != ENOTCONN || Clock::now() >= deadline) {
            record(sent.error());
            return;
        }
        (void)side_.events->pump(std::chrono::milliseconds(10));
    }
}

void LoopbackTarget::run() {
    Waiter waiter(side_.fabric.get(),
                  WaitPolicy{std::chrono::microseconds(20), std::chrono::milliseconds(20)});
    std::array<Completion, 16> completions;
    while (!stop_.load()) {
        serve_requests();
        auto read = waiter.wait(*completions_, completions, side_.events.get(), nullptr,
                                deadline_after(std::chrono::milliseconds(20)));
        if (!read) {
            const CompletionError& failure = read.error();
            if (failure.context == nullptr && failure.error.errno_value() == ETIMEDOUT)
                continue;
            if (failure.context == nullptr)
                record(failure.error);
            // A lane's operation failed: its peer went away or misbehaved. Keep serving.
        } else {
            for (std::size_t i = 0; i < *read; ++i) {
                if ((completions[i].flags & FI_RECV) != 0)
                    answer(*static_cast<Lane*>(completions[i].context));
            }
        }
        std::size_t broken = 0;
        for (const auto& lane : lanes_)
            broken += lane->endpoint.state().failed() ? 1 : 0;
        broken_ = broken;
    }
}

LoopbackClient::LoopbackClient(const std::string& provider, const std::string& service,
                               std::size_t buffer_size)
    : side_(Side::open(ProviderRequest{provider, Role::connector, "127.0.0.1", service}))
    , buffer_(buffer_size) {
    region_.emplace(
        must(MemoryRegion::register_memory(side_.domain, buffer_.data(), buffer_.size(),
                                           access::kWriteSource | access::kReadTarget |
                                               access::kSendSource | access::kReceiveTarget)));
}

OwnQueueEndpoint LoopbackClient::start_lane(std::span<const std::byte> private_data,
                                            EndpointOptions options) {
    OwnQueueEndpoint endpoint =
        must(OwnQueueEndpoint::create(side_.domain, *side_.provider.info, *side_.events, options));
    must(endpoint.connect(private_data));
    return endpoint;
}

OwnQueueEndpoint LoopbackClient::connect_lane(std::span<const std::byte> private_data,
                                              EndpointOptions options) {
    OwnQueueEndpoint endpoint = start_lane(private_data, std::move(options));
    must(endpoint.wait_connected(deadline_after(std::chrono::seconds(10))));
    return endpoint;
}

void exchange_messages(LoopbackClient& client, OwnQueueEndpoint& lane, std::size_t offset) {
    const auto deadline = std::chrono::seconds(10);
    int reply_tag = 0;
    int send_tag = 0;
    for (unsigned round = 0; round < 3; ++round) {
        std::byte* message = client.buffer() + offset;
        std::byte* reply = message + kMessageSize;
        fill(message, kMessageSize, round);
        must(lane.post_receive(client.region(), offset + kMessageSize, kMessageSize, &reply_tag));
        must(lane.send(client.region(), offset, kMessageSize, Signal::yes, &send_tag));
        const Completion received = must(lane.wait_for(&reply_tag, deadline_after(deadline)));
        CHECK(received.length == kMessageSize);
        CHECK((received.flags & FI_RECV) != 0);
        must(lane.wait_for(&send_tag, deadline_after(deadline)));
        for (std::size_t i = 0; i < kMessageSize; ++i)
            REQUIRE(static_cast<unsigned char>(reply[i]) ==
                    static_cast<unsigned char>(static_cast<unsigned char>(message[i]) + 1));
    }
}

} // namespace rpmem::fabric::test
