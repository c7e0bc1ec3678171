// SPDX-License-Identifier: BSD-3-Clause
#include "persist/target_lane.h"

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <fmt/format.h>
#include <rdma/fi_errno.h>
#include <spdlog/logger.h>

#include "base/library_logger.h"

namespace rpmem::persist {

using protocol::kLaneCredits;
using protocol::kLaneReplySize;

namespace {

spdlog::logger& logger() {
    // Looked up once: a logger is never removed, so each call is then only spdlog's atomic
    // level check, with no lock and no map lookup.
    static spdlog::logger& instance = library_logger("rpmem.persist");
    return instance;
}

} // namespace

std::size_t TargetLane::buffer_size(std::size_t inline_size) noexcept {
    return kLaneCredits * protocol::lane_slot_size(inline_size) + kReplySlots * kLaneReplySize;
}

TargetLane::TargetLane(unsigned index, const TargetPool& pool, std::size_t inline_size,
                       std::size_t protected_prefix, const fabric::MemoryRegion& buffers,
                       std::size_t buffer_offset, std::string name,
                       protocol::DataPathCounterPage* counters,
                       std::chrono::nanoseconds reply_delay)
    : index_(index)
    , handler_(pool, inline_size, protected_prefix)
    , slot_size_(protocol::lane_slot_size(inline_size))
    , buffers_(buffers)
    , buffer_offset_(buffer_offset)
    , name_(std::move(name))
    , counters_(counters)
    , reply_delay_(std::max(reply_delay, std::chrono::nanoseconds::zero())) {
    for (unsigned i = 0; i < kLaneCredits; ++i)
        receives_[i] = {this, false, i, false};
    for (unsigned i = 0; i < kReplySlots; ++i)
        replies_[i] = {this, true, i, false};
}

TargetLane* TargetLane::owner_of(void* context) noexcept {
    return context != nullptr ? static_cast<Slot*>(context)->lane : nullptr;
}

std::size_t TargetLane::receive_offset(unsigned index) const noexcept {
    return buffer_offset_ + index * slot_size_;
}

std::size_t TargetLane::reply_offset(unsigned index) const noexcept {
    return buffer_offset_ + kLaneCredits * slot_size_ + index * kLaneReplySize;
}

Result<void> TargetLane::accept(fabric::SharedQueueEndpoint endpoint) {
    if (endpoint_ || retired_)
        return fail(EBUSY, fmt::format("lane {} is already connected or was closed", index_));
    for (Slot& slot : receives_) {
        if (auto posted =
                endpoint.post_receive(buffers_, receive_offset(slot.index), slot_size_, &slot);
            !posted)
            return posted;
    }
    if (auto accepted = endpoint.accept(); !accepted)
        return accepted;
    endpoint_.emplace(std::move(endpoint));
    next_reply_ = 0;
    return {};
}

void TargetLane::on_completion(const fabric::Completion& completion) {
    auto* slot = static_cast<Slot*>(completion.context);
    if (slot->reply)
        slot->busy = false;
    else if ((completion.flags & FI_RECV) != 0)
        on_receive(*slot, completion.length);
}

void TargetLane::on_failure(const fabric::CompletionError& failure) {
    static_cast<Slot*>(failure.context)->busy = false;
    // A connection that ends, cleanly or not, cancels the receives still posted on it;
    // "operation canceled" would only puzzle whoever reads the log.
    close(failure.error.native_code() == FI_ECANCELED ? std::string("the initiator disconnected")
                                                      : failure.error.message());
}

void TargetLane::check_connection() {
    if (endpoint_ && endpoint_->state().failed())
        close(endpoint_->state().failure().message());
    else if (endpoint_ && awaiting_connection_)
        send_waiting_replies(Clock::now());
}

std::size_t TargetLane::send_due_replies(Clock::time_point now) {
    return awaiting_connection_ ? 0 : send_waiting_replies(now);
}

std::optional<TargetLane::Clock::time_point> TargetLane::next_due() const noexcept {
    if (!endpoint_ || waiting_count_ == 0 || awaiting_connection_)
        return std::nullopt;
    return waiting_[waiting_first_].due;
}

void TargetLane::on_receive(Slot& slot, std::size_t length) {
    if (!endpoint_)
        return;
    const std::size_t offset = receive_offset(slot.index);
    // The clock is read only where the counters are kept (rpmemd), around the handling alone.
    const auto began = counters_ != nullptr ? std::chrono::steady_clock::now()
                                            : std::chrono::steady_clock::time_point{};
    auto outcome = handler_.handle({buffers_.data() + offset, std::min(length, slot_size_)});
    if (counters_ != nullptr && outcome.persisted_bytes > 0) {
        const auto served = std::chrono::steady_clock::now() - began;
        counters_->record(
            outcome.persisted_bytes,
            static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(served).count()));
    }
    if (counters_ != nullptr && outcome.initiator_lag)
        counters_->record_lag(*outcome.initiator_lag);

    if (outcome.close_lane) {
        if (outcome.reply)
            send_reply(*outcome.reply);
        close(fmt::format("malformed persist message (status {})",
                          outcome.reply ? outcome.reply->status : 0));
        return;
    }
    // The buffer is free again: repost it before answering, so the initiator's next message
    // (which our reply allows) always finds it.
    if (auto posted = endpoint_->post_receive(buffers_, offset, slot_size_, &slot); !posted) {
        close(posted.error().message());
        return;
    }
    if (outcome.reply)
        send_reply(*outcome.reply);
}

void TargetLane::send_reply(const protocol::LaneReply& reply) {
    Slot& slot = replies_[next_reply_];
    if (slot.busy) {
        // More replies in flight than the credits allow: the initiator broke the protocol.
        close("reply buffers exhausted");
        return;
    }
    next_reply_ = (next_reply_ + 1) % kReplySlots;
    protocol::encode(reply, {buffers_.data() + reply_offset(slot.index), kLaneReplySize});
    slot.busy = true; // in flight, held, or waiting for the connection
    if (reply_delay_.count() == 0 && waiting_count_ == 0) {
        const Sent sent = try_send(slot);
        if (sent != Sent::not_connected_yet)
            return;
        awaiting_connection_ = true;
    }
    // Without a delay, `due` is when it was queued: the connection's patience counts from it.
    const Clock::time_point due = Clock::now() + reply_delay_;
    // Behind every reply already waiting, so that order is kept (with a reply delay, `due`
    // grows with the queue: the clock is monotonic and the delay fixed).
    waiting_[(waiting_first_ + waiting_count_) % kReplySlots] = {slot.index, due};
    ++waiting_count_;
}

TargetLane::Sent TargetLane::try_send(Slot& slot) {
    auto sent = endpoint_->send(buffers_, reply_offset(slot.index), kLaneReplySize, &slot);
    if (sent)
        return Sent::sent;
    if (sent.error().errno_value() == ENOTCONN)
        return Sent::not_connected_yet;
    close(sent.error().message());
    return Sent::failed;
}

std::size_t TargetLane::send_waiting_replies(Clock::time_point now) {
    std::size_t sent = 0;
    while (waiting_count_ > 0 && endpoint_) {
        const Waiting& first = waiting_[waiting_first_];
        if (first.due > now)
            break;
        switch (try_send(replies_[first.slot])) {
        case Sent::sent:
            waiting_first_ = (waiting_first_ + 1) % kReplySlots;
            --waiting_count_;
            awaiting_connection_ = false;
            ++sent;
            break;
        case Sent::not_connected_yet:
            awaiting_connection_ = true;
            if (now - first.due >= kConnectPatience)
                close(fmt::format("the connection was not established within {} s of the "
                                  "lane's first message",
                                  kConnectPatience.count()));
            return sent;
        case Sent::failed:
            return sent;
        }
    }
    return sent;
}

void TargetLane::close(std::string_view why) {
    if (!endpoint_)
        return;
    logger().info("{}: lane {} closed: {}", name_, index_, why);
    shutdown();
}

void TargetLane::shutdown() noexcept {
    if (!endpoint_)
        return;
    (void)endpoint_->shutdown();
    endpoint_.reset();
    retired_ = true;
    waiting_count_ = 0;
    awaiting_connection_ = false;
    for (Slot& reply : replies_)
        reply.busy = false;
}

} // namespace rpmem::persist
