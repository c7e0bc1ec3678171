// SPDX-License-Identifier: BSD-3-Clause
#include "persist/initiator_lane.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace rpmem::persist {

namespace {

constexpr std::size_t kCacheLine = 64;
constexpr std::chrono::milliseconds kSlice{50}; // how often a wait looks at the abort flag

using protocol::kLaneCredits;
using protocol::kLaneHeaderSize;
using protocol::kLaneReplySize;
using protocol::LaneOperation;
using protocol::PersistMethod;

std::size_t round_up(std::size_t size, std::size_t unit) noexcept {
    return (size + unit - 1) / unit * unit;
}

} // namespace

std::size_t InitiatorLane::buffer_size(std::size_t inline_size, std::size_t bounce_size) noexcept {
    return round_up(kLaneCredits * protocol::lane_slot_size(inline_size), kCacheLine) +
           kLaneCredits * kCacheLine + kCacheLine + round_up(bounce_size, kCacheLine);
}

InitiatorLane::InitiatorLane(unsigned index, fabric::OwnQueueEndpoint endpoint,
                             const fabric::MemoryRegion& pool, const fabric::RemoteRegion& remote,
                             const fabric::MemoryRegion& buffers, std::size_t buffer_offset,
                             const InitiatorConfig& config)
    : index_(index)
    , endpoint_(std::move(endpoint))
    , pool_(pool)
    , remote_(remote)
    , buffers_(buffers)
    , buffer_offset_(buffer_offset)
    , config_(config)
    , slot_size_(protocol::lane_slot_size(config.inline_size)) {
    const std::size_t sends = round_up(kLaneCredits * slot_size_, kCacheLine);
    apm_offset_ = buffer_offset_ + sends + kLaneCredits * kCacheLine;
    bounce_offset_ = apm_offset_ + kCacheLine;
    for (unsigned i = 0; i < kLaneCredits; ++i) {
        send_tags_[i] = {Tag::Kind::send, i};
        reply_tags_[i] = {Tag::Kind::reply, i};
    }
}

std::size_t InitiatorLane::send_slot_offset(unsigned slot) const noexcept {
    return buffer_offset_ + slot * slot_size_;
}

std::size_t InitiatorLane::reply_slot_offset(unsigned slot) const noexcept {
    return buffer_offset_ + round_up(kLaneCredits * slot_size_, kCacheLine) + slot * kCacheLine;
}

Error InitiatorLane::lane_error(Error error, std::string_view step) const {
    return std::move(error).add_context(
        fmt::format("{}: lane {}: {}", config_.target, index_, step));
}

Result<void> InitiatorLane::start() {
    for (unsigned i = 0; i < kLaneCredits; ++i) {
        auto posted =
            endpoint_.post_receive(buffers_, reply_slot_offset(i), kLaneReplySize, &reply_tags_[i]);
        if (!posted)
            return fail(lane_error(std::move(posted.error()), "posting reply buffers"));
    }
    return {};
}

Result<void> InitiatorLane::on_completion(const fabric::Completion& completion) {
    const auto* tag = static_cast<const Tag*>(completion.context);
    if (tag == nullptr)
        return {};
    switch (tag->kind) {
    case Tag::Kind::send:
        send_busy_[tag->index] = false;
        return {};
    case Tag::Kind::commit:
        --commits_in_flight_;
        return {};
    case Tag::Kind::read:
        reads_in_flight_ = false;
        return {};
    case Tag::Kind::reply:
        break;
    }

    const std::size_t offset = reply_slot_offset(tag->index);
    auto reply = protocol::decode_lane_reply(
        {buffers_.data() + offset, std::min(completion.length, kLaneReplySize)});
    if (!reply)
        return fail(std::move(reply.error()));
    // Repost before anything else can go wrong, so the credit accounting stays exact.
    if (auto posted =
            endpoint_.post_receive(buffers_, offset, kLaneReplySize, const_cast<Tag*>(tag));
        !posted)
        return fail(std::move(posted.error()));
    if (reply->status != 0) {
        int error = static_cast<int>(reply->status);
        return fail(Error(
            error,
            fmt::format("the target failed message {}: {}", reply->sequence, std::strerror(error)),
            ErrorSource::remote, error));
    }
    if (!credits_.acknowledge(reply->sequence))
        return fail(EPROTO,
                    fmt::format("the target acknowledged message {}, which was never sent (last "
                                "sent: {})",
                                reply->sequence, credits_.last_sent()),
                    ErrorSource::protocol);
    return {};
}

template <typename Done>
Result<void> InitiatorLane::wait_until(Done&& done, const char* step) {
    if (done())
        return {};
    // One clock read per wait here; the Waiter reads it only when it has to spin or block.
    const fabric::Deadline started = fabric::Clock::now();
    const fabric::Deadline deadline = started + config_.timeout;
    fabric::Deadline slice = std::min(deadline, started + kSlice);
    std::array<fabric::Completion, 16> completions;
    while (!done()) {
        if (config_.abort != nullptr && config_.abort->load(std::memory_order_acquire))
            return fail(
                lane_error(Error(ECONNRESET, "the control channel to the target failed"), step));
        auto read = endpoint_.wait(completions, slice);
        if (!read) {
            const fabric::Deadline now = fabric::Clock::now();
            if (read.error().errno_value() == ETIMEDOUT && now < deadline) {
                slice = std::min(deadline, now + kSlice);
                continue;
            }
            if (read.error().errno_value() == ETIMEDOUT)
                return fail(lane_error(Error(ETIMEDOUT, fmt::format("no answer within {} ms",
                                                                    config_.timeout.count())),
                                       step));
            return fail(lane_error(std::move(read.error()), step));
        }
        for (std::size_t i = 0; i < *read; ++i) {
            if (auto handled = on_completion(completions[i]); !handled)
                return fail(lane_error(std::move(handled.error()), step));
        }
    }
    return {};
}

Result<void> InitiatorLane::send_one(LaneOperation operation, std::size_t offset,
                                     std::size_t length, bool acknowledge,
                                     std::span<const protocol::LaneRange> list,
                                     std::span<const std::byte> records) {
    // A free slot of ours, and a free receive buffer at the target (credits).
    const unsigned slot = next_send_slot_;
    if (auto room = wait_until([&] { return !send_busy_[slot] && credits_.has_credit(); },
                               "waiting for a message buffer");
        !room)
        return room;

    const CreditWindow::Ticket ticket = credits_.next(acknowledge);
    const protocol::LaneRequest request{.operation = operation,
                                        .flags = ticket.ask_ack ? protocol::kAckRequested
                                                                : std::uint8_t{0},
                                        .sequence = ticket.sequence,
                                        .offset = offset,
                                        .length = length};
    const std::size_t at = send_slot_offset(slot);
    std::byte* message = buffers_.data() + at;
    if (request.carries_data())
        std::memcpy(message + kLaneHeaderSize, pool_.data() + offset, length);
    else if (operation == LaneOperation::flush_list)
        protocol::encode(list, {message + kLaneHeaderSize, length});
    else if (operation == LaneOperation::persist_records)
        std::memcpy(message + kLaneHeaderSize, records.data(), length);
    protocol::encode(request, {message, kLaneHeaderSize});
    const std::size_t size = kLaneHeaderSize + (request.carries_payload() ? length : 0);

    auto sent = endpoint_.send(buffers_, at, size, fabric::Signal::yes, &send_tags_[slot]);
    if (!sent)
        return fail(lane_error(std::move(sent.error()), "sending a persist message"));
    send_busy_[slot] = true;
    next_send_slot_ = (slot + 1) % kLaneCredits;
    credits_.sent(ticket);
    return {};
}

Result<void> InitiatorLane::send_messages(LaneOperation operation, std::size_t offset,
                                          std::size_t length, bool acknowledge_last) {
    std::size_t done = 0;
    do {
        const std::size_t chunk = std::min(config_.inline_size, length - done);
        const bool last = done + chunk == length;
        if (auto sent = send_one(operation, offset + done, chunk, last && acknowledge_last); !sent)
            return sent;
        done += chunk;
    } while (done < length);
    return {};
}

Result<void> InitiatorLane::wait_acknowledged() {
    if (credits_.all_acknowledged())
        return {};
    if (!credits_.last_asked_ack()) {
        if (auto barrier = send_one(LaneOperation::barrier, 0, 0, true); !barrier)
            return barrier;
    }
    const std::uint32_t last = credits_.last_sent();
    return wait_until([&] { return credits_.acknowledged(last); },
                      "waiting for the target's acknowledgement");
}

Result<void> InitiatorLane::write_range(std::size_t offset, std::size_t length, bool commit) {
    std::size_t done = 0;
    while (done < length) {
        const std::size_t chunk =
            static_cast<std::size_t>(std::min<std::uint64_t>(config_.max_write, length - done));
        auto written = commit
                           ? endpoint_.write_commit(pool_, offset + done, chunk, remote_,
                                                    offset + done, &commit_tag_)
                           : endpoint_.write(pool_, offset + done, chunk, remote_, offset + done);
        if (!written)
            return fail(lane_error(std::move(written.error()), "writing to the target"));
        if (commit)
            ++commits_in_flight_;
        done += chunk;
    }
    if (!commit && length > 0) {
        unread_writes_ = true;
        // APM's read goes to pool data this lane just wrote: the target registers nothing
        // else for sure (never the header), and it holds nothing the initiator has not.
        apm_read_offset_ = std::min<std::uint64_t>(
            offset, remote_.length - std::min<std::uint64_t>(remote_.length, 8));
    }
    return {};
}

Result<void> InitiatorLane::read_remote(std::size_t buffer_offset, std::size_t length,
                                        std::uint64_t remote_offset) {
    auto posted =
        endpoint_.read(buffers_, buffer_offset, length, remote_, remote_offset, &read_tag_);
    if (!posted)
        return fail(lane_error(std::move(posted.error()), "reading from the target"));
    reads_in_flight_ = true;
    return wait_until([&] { return !reads_in_flight_; }, "waiting for a read");
}

Result<void> InitiatorLane::persist(std::size_t offset, std::size_t length, bool relaxed) {
    if (auto flushed = flush(offset, length, relaxed); !flushed)
        return flushed;
    return drain();
}

Result<void> InitiatorLane::deep_persist(std::size_t offset, std::size_t length) {
    if (auto sent = send_messages(LaneOperation::deep_persist_inline, offset, length, true); !sent)
        return sent;
    return drain();
}

Result<void> InitiatorLane::flush(std::size_t offset, std::size_t length, bool relaxed) {
    if (length == 0)
        return {};
    if (!relaxed)
        return send_messages(LaneOperation::persist_inline, offset, length, true);
    switch (config_.method) {
    case PersistMethod::commit:
        return write_range(offset, length, true);
    case PersistMethod::apm:
        return write_range(offset, length, false);
    case PersistMethod::gpspm:
        if (auto written = write_range(offset, length, false); !written)
            return written;
        unread_writes_ = false; // the flush message, ordered after the writes, covers them
        return send_one(LaneOperation::flush, offset, length, true);
    case PersistMethod::any: // the lane set refuses a target that chose none
        break;
    }
    return {};
}

Result<void> InitiatorLane::flush_ranges(std::span<const protocol::LaneRange> ranges) {
    for (const protocol::LaneRange& range : ranges)
        if (auto written = write_range(range.offset, range.length, false); !written)
            return written;
    const std::size_t per_message = config_.inline_size / protocol::kLaneRangeSize;
    for (std::size_t first = 0; first < ranges.size(); first += per_message) {
        const auto list = ranges.subspan(first, std::min(per_message, ranges.size() - first));
        if (auto sent = send_one(LaneOperation::flush_list, 0,
                                 list.size() * protocol::kLaneRangeSize, true, list);
            !sent)
            return sent;
    }
    return {};
}

Result<std::uint32_t> InitiatorLane::send_records(std::span<const std::byte> records,
                                                  std::uint64_t behind) {
    if (auto sent =
            send_one(LaneOperation::persist_records, behind, records.size(), true, {}, records);
        !sent)
        return fail(std::move(sent.error()));
    return credits_.last_sent();
}

Result<void> InitiatorLane::wait_acknowledged(std::uint32_t sequence) {
    return wait_until([&] { return credits_.acknowledged(sequence); },
                      "waiting for the target's acknowledgement of queued records");
}

Result<void> InitiatorLane::drain() {
    if (auto acknowledged = wait_acknowledged(); !acknowledged)
        return acknowledged;
    if (commits_in_flight_ > 0) {
        if (auto committed =
                wait_until([&] { return commits_in_flight_ == 0; }, "waiting for committed writes");
            !committed)
            return committed;
    }
    if (unread_writes_ && config_.method == PersistMethod::apm) {
        // Read after write on the same connection: the writes before it have reached the
        // target's persistence domain once the read completes.
        if (auto read = read_remote(apm_offset_, 8, apm_read_offset_); !read)
            return read;
        unread_writes_ = false;
    }
    return {};
}

Result<void> InitiatorLane::read(std::span<std::byte> into, std::size_t offset) {
    const std::size_t bounce = config_.bounce_size;
    std::size_t done = 0;
    while (done < into.size()) {
        const std::size_t chunk = std::min(bounce, into.size() - done);
        if (auto read = read_remote(bounce_offset_, chunk, offset + done); !read)
            return read;
        std::memcpy(into.data() + done, buffers_.data() + bounce_offset_, chunk);
        done += chunk;
    }
    return {};
}

void InitiatorLane::shutdown() noexcept {
    (void)endpoint_.shutdown();
}

} // namespace rpmem::persist
