// SPDX-License-Identifier: BSD-3-Clause
#include "raw_client.h"

#include <cerrno>

#include <fmt/format.h>

namespace rpmem::bench {

using namespace rpmem::fabric;

namespace {

// Per lane: request at 0, reply at 64, read bounce at 128.
constexpr std::size_t kLaneSlot = 256;
constexpr std::size_t kReplyOffset = 64;
constexpr std::size_t kBounceOffset = 128;
constexpr std::size_t kReadSize = 8;
constexpr auto kOperationTimeout = std::chrono::seconds(10);

} // namespace

std::string_view to_string(RawOperation operation) noexcept {
    switch (operation) {
    case RawOperation::apm:
        return "apm";
    case RawOperation::gpspm:
        return "gpspm";
    case RawOperation::commit:
        return "commit";
    case RawOperation::batch:
        return "batch";
    }
    return "?";
}

std::optional<RawOperation> parse_operation(std::string_view name) noexcept {
    for (const RawOperation operation :
         {RawOperation::apm, RawOperation::gpspm, RawOperation::commit, RawOperation::batch}) {
        if (name == to_string(operation))
            return operation;
    }
    return std::nullopt;
}

std::size_t payload_bytes(RawOperation operation, std::size_t size) noexcept {
    return operation == RawOperation::batch ? kBatchWrites * size : size;
}

RawClient::RawClient(std::unique_ptr<Stack> stack, RemoteRegion target, std::size_t region_size)
    : stack_(std::move(stack))
    , target_(target)
    , region_size_(region_size) {}

RawClient::~RawClient() {
    lanes_.clear(); // endpoints before the event queue and regions
}

Result<std::unique_ptr<RawClient>> RawClient::connect(const std::string& provider_name,
                                                      const std::string& address,
                                                      const std::string& service, std::size_t lanes,
                                                      std::size_t region_size,
                                                      const RemoteRegion& target) {
    auto stack = Stack::open({provider_name, Role::connector, address, service, {}});
    if (!stack)
        return fail(std::move(stack.error()));
    std::unique_ptr<RawClient> client(new RawClient(std::move(*stack), target, region_size));
    if (auto opened = client->open(lanes); !opened)
        return fail(std::move(opened.error().add_context("connecting the benchmark lanes")));
    return client;
}

Result<void> RawClient::open(std::size_t lanes) {
    auto source_memory = PageBuffer::allocate(region_size_);
    auto message_memory = PageBuffer::allocate(lanes * kLaneSlot);
    if (!source_memory || !message_memory)
        return fail(ENOMEM, "allocating the client's buffers", ErrorSource::system, ENOMEM);
    source_ = std::move(*source_memory);
    messages_ = std::move(*message_memory);
    for (std::size_t i = 0; i < region_size_; ++i)
        source_.data()[i] = std::byte(static_cast<unsigned char>(i * 131 + 17));
    auto source = MemoryRegion::register_memory(stack_->domain(), source_.data(), region_size_,
                                                access::kWriteSource);
    if (!source)
        return fail(std::move(source.error()));
    source_region_.emplace(std::move(*source));
    auto messages = MemoryRegion::register_memory(
        stack_->domain(), messages_.data(), lanes * kLaneSlot,
        access::kSendSource | access::kReceiveTarget | access::kReadTarget);
    if (!messages)
        return fail(std::move(messages.error()));
    message_region_.emplace(std::move(*messages));

    // Connect every lane at once, then wait for each.
    lanes_.reserve(lanes);
    const std::string token = "rpmem-bench";
    for (std::size_t i = 0; i < lanes; ++i) {
        auto endpoint =
            OwnQueueEndpoint::create(stack_->domain(), stack_->info(), stack_->events());
        if (!endpoint)
            return fail(std::move(endpoint.error()));
        if (auto connected = endpoint->connect(std::as_bytes(std::span(token))); !connected)
            return fail(std::move(connected.error()));
        lanes_.push_back(Lane{std::move(*endpoint), i});
    }
    for (Lane& lane : lanes_) {
        if (auto connected = lane.endpoint.wait_connected(deadline_after(kOperationTimeout));
            !connected)
            return fail(std::move(connected.error()));
    }
    return {};
}

void RawClient::set_wait_policy(const WaitPolicy& policy) {
    for (Lane& lane : lanes_)
        lane.endpoint.set_wait_policy(policy);
}

Result<void> RawClient::run_once(RawOperation operation, std::size_t index, std::size_t size) {
    Lane& lane = lanes_[index];
    OwnQueueEndpoint& endpoint = lane.endpoint;
    const MemoryRegion& source = *source_region_;
    const MemoryRegion& messages = *message_region_;
    const std::size_t slot = index * kLaneSlot;
    const Deadline deadline = deadline_after(kOperationTimeout);

    const auto completed = [&](void* tag) -> Result<void> {
        if (auto done = endpoint.wait_for(tag, deadline); !done)
            return fail(std::move(done.error()));
        return {};
    };
    // APM's and batch's end: a read, done once the writes before it on the connection are.
    const auto read_back = [&]() -> Result<void> {
        if (auto read = endpoint.read(messages, slot + kBounceOffset, kReadSize, target_, 0,
                                      &lane.read_tag);
            !read)
            return read;
        return completed(&lane.read_tag);
    };

    switch (operation) {
    case RawOperation::apm: {
        if (auto written = endpoint.write(source, 0, size, target_, 0); !written)
            return written;
        return read_back();
    }
    case RawOperation::gpspm: {
        if (auto posted =
                endpoint.post_receive(messages, slot + kReplyOffset, kReplySize, &lane.reply_tag);
            !posted)
            return posted;
        if (auto written = endpoint.write(source, 0, size, target_, 0); !written)
            return written;
        if (auto sent = endpoint.send(messages, slot, kRequestSize, Signal::no, nullptr); !sent)
            return sent;
        return completed(&lane.reply_tag);
    }
    case RawOperation::commit: {
        if (auto written = endpoint.write_commit(source, 0, size, target_, 0, &lane.commit_tag);
            !written)
            return written;
        return completed(&lane.commit_tag);
    }
    case RawOperation::batch: {
        for (std::size_t i = 0; i < kBatchWrites; ++i) {
            if (auto written = endpoint.write(source, i * size, size, target_, i * size); !written)
                return written;
        }
        return read_back();
    }
    }
    return fail(EINVAL, fmt::format("unknown operation {}", static_cast<int>(operation)));
}

} // namespace rpmem::bench
