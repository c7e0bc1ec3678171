// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/lane_message.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "base/little_endian.h"

namespace rpmem::protocol {

namespace {

bool known(std::uint8_t operation) noexcept {
    return operation >= static_cast<std::uint8_t>(LaneOperation::persist_inline) &&
           operation <= static_cast<std::uint8_t>(LaneOperation::persist_records);
}

// The target's one range check: inside the pool and clear of its protected prefix.
Result<void> check_range(std::uint64_t offset, std::uint64_t length, const LaneLimits& limits) {
    if (offset > limits.pool_size || length > limits.pool_size - offset)
        return fail(EINVAL, fmt::format("range [{}, +{}) is outside the pool of {} bytes", offset,
                                        length, limits.pool_size));
    if (length != 0 && offset < limits.protected_prefix)
        return fail(EINVAL, fmt::format("range [{}, +{}) overlaps the pool header (first {} "
                                        "bytes)",
                                        offset, length, limits.protected_prefix));
    return {};
}

Result<void> check_flush_list(std::span<const std::byte> message, const LaneRequest& request,
                              const LaneLimits& limits) {
    if (request.offset != 0)
        return fail(EPROTO, fmt::format("flush list has offset {}, not 0", request.offset),
                    ErrorSource::protocol);
    if (request.length == 0 || request.length % kLaneRangeSize != 0)
        return fail(EPROTO,
                    fmt::format("flush list of {} bytes is not a positive multiple of {}",
                                request.length, kLaneRangeSize),
                    ErrorSource::protocol);
    for (std::size_t i = 0; i < flush_list_size(request); ++i) {
        const LaneRange range = flush_list_range(message, i);
        if (auto inside = check_range(range.offset, range.length, limits); !inside)
            return fail(
                std::move(inside.error()).add_context(fmt::format("flush list range {}", i)));
    }
    return {};
}

// Every record whole, its padding and reserved bytes zero, its flags known, its range inside
// the pool: the target then applies them without another check.
Result<void> check_records(std::span<const std::byte> message, const LaneRequest& request,
                           const LaneLimits& limits) {
    if (request.length == 0)
        return fail(EPROTO, "record list carries no record", ErrorSource::protocol);
    const std::byte* data = message.data() + kLaneHeaderSize;
    std::size_t index = 0;
    for (std::size_t at = 0; at < request.length; ++index) {
        const std::string which = fmt::format("record {} (at byte {})", index, at);
        if (request.length - at < kLaneRecordHeaderSize)
            return fail(EPROTO, which + ": shorter than its header", ErrorSource::protocol);
        const LaneRecord record = lane_record_at(message, at);
        if ((record.flags & ~kRecordDeep) != 0)
            return fail(EPROTO, fmt::format("{}: unknown flags {:#x}", which, record.flags),
                        ErrorSource::protocol);
        if (load_le<std::uint8_t>(data + at + 13) != 0 ||
            load_le<std::uint16_t>(data + at + 14) != 0)
            return fail(EPROTO, which + ": non-zero reserved bytes", ErrorSource::protocol);
        if (record.length == 0)
            return fail(EPROTO, which + ": no data", ErrorSource::protocol);
        const std::size_t size = lane_record_size(record.length);
        if (size > request.length - at)
            return fail(EPROTO,
                        fmt::format("{}: says {} bytes of data, only {} follow", which,
                                    record.length, request.length - at - kLaneRecordHeaderSize),
                        ErrorSource::protocol);
        for (std::size_t pad = kLaneRecordHeaderSize + record.length; pad < size; ++pad)
            if (data[at + pad] != std::byte{0})
                return fail(EPROTO, which + ": non-zero padding", ErrorSource::protocol);
        if (auto inside = check_range(record.offset, record.length, limits); !inside)
            return fail(std::move(inside.error()).add_context(which));
        at += size;
    }
    return {};
}

Result<LaneRequest> validate(std::span<const std::byte> message, const LaneLimits& limits) {
    const std::byte* in = message.data();
    auto operation = load_le<std::uint8_t>(in);
    if (!known(operation))
        return fail(EPROTO, fmt::format("persist message has unknown operation {}", operation),
                    ErrorSource::protocol);
    LaneRequest request;
    request.operation = static_cast<LaneOperation>(operation);
    request.flags = load_le<std::uint8_t>(in + 1);
    if ((request.flags & ~kAckRequested) != 0)
        return fail(EPROTO, fmt::format("persist message has unknown flags {:#x}", request.flags),
                    ErrorSource::protocol);
    if (load_le<std::uint16_t>(in + 2) != 0 || load_le<std::uint64_t>(in + 24) != 0)
        return fail(EPROTO, "persist message has non-zero reserved fields", ErrorSource::protocol);
    request.sequence = load_le<std::uint32_t>(in + 4);
    request.offset = load_le<std::uint64_t>(in + 8);
    request.length = load_le<std::uint64_t>(in + 16);

    const std::uint64_t data_length = message.size() - kLaneHeaderSize;
    if (request.carries_payload()) {
        if (request.length > limits.inline_limit)
            return fail(EPROTO,
                        fmt::format("persist message carries {} bytes inline, more than the "
                                    "lane's {}",
                                    request.length, limits.inline_limit),
                        ErrorSource::protocol);
        if (request.length != data_length)
            return fail(EPROTO,
                        fmt::format("persist message says {} bytes of data but {} arrived",
                                    request.length, data_length),
                        ErrorSource::protocol);
    } else if (data_length != 0) {
        return fail(EPROTO,
                    fmt::format("persist message without data carries {} bytes", data_length),
                    ErrorSource::protocol);
    }

    Result<void> checked;
    if (request.operation == LaneOperation::flush_list)
        checked = check_flush_list(message, request, limits);
    else if (request.operation == LaneOperation::persist_records)
        checked = check_records(message, request, limits);
    else
        checked = check_range(request.offset, request.length, limits);
    if (!checked)
        return fail(std::move(checked.error()));
    return request;
}

} // namespace

void encode(const LaneRequest& request, std::span<std::byte> out) noexcept {
    std::byte* o = out.data();
    store_le(o, static_cast<std::uint8_t>(request.operation));
    store_le(o + 1, request.flags);
    store_le(o + 2, std::uint16_t{0});
    store_le(o + 4, request.sequence);
    store_le(o + 8, request.offset);
    store_le(o + 16, request.length);
    store_le(o + 24, std::uint64_t{0});
}

void encode(const LaneReply& reply, std::span<std::byte> out) noexcept {
    std::byte* o = out.data();
    store_le(o, reply.sequence);
    store_le(o + 4, reply.status);
    store_le(o + 8, std::uint64_t{0});
}

void encode(std::span<const LaneRange> ranges, std::span<std::byte> out) noexcept {
    std::byte* o = out.data();
    for (const LaneRange& range : ranges) {
        store_le(o, range.offset);
        store_le(o + 8, range.length);
        o += kLaneRangeSize;
    }
}

void encode(const LaneRecord& record, std::span<const std::byte> data,
            std::span<std::byte> out) noexcept {
    std::byte* o = out.data();
    store_le(o, record.offset);
    store_le(o + 8, record.length);
    store_le(o + 12, record.flags);
    std::memset(o + 13, 0, 3);
    std::memcpy(o + kLaneRecordHeaderSize, data.data(), record.length);
    const std::size_t end = kLaneRecordHeaderSize + record.length;
    std::memset(o + end, 0, lane_record_size(record.length) - end);
}

LaneRecord lane_record_at(std::span<const std::byte> message, std::size_t at) noexcept {
    const std::byte* in = message.data() + kLaneHeaderSize + at;
    return {load_le<std::uint64_t>(in), load_le<std::uint32_t>(in + 8),
            load_le<std::uint8_t>(in + 12)};
}

std::span<const std::byte> lane_record_data(std::span<const std::byte> message, std::size_t at,
                                            const LaneRecord& record) noexcept {
    return message.subspan(kLaneHeaderSize + at + kLaneRecordHeaderSize, record.length);
}

LaneRange flush_list_range(std::span<const std::byte> message, std::size_t index) noexcept {
    const std::byte* at = message.data() + kLaneHeaderSize + index * kLaneRangeSize;
    return {load_le<std::uint64_t>(at), load_le<std::uint64_t>(at + 8)};
}

Decoded<LaneRequest> decode_lane_request(std::span<const std::byte> message,
                                         const LaneLimits& limits) {
    if (message.size() < kLaneHeaderSize)
        return {0, fail(EPROTO,
                        fmt::format("persist message of {} bytes is shorter than its {}-byte "
                                    "header",
                                    message.size(), kLaneHeaderSize),
                        ErrorSource::protocol)};
    return {load_le<std::uint32_t>(message.data() + 4), validate(message, limits)};
}

Result<LaneReply> decode_lane_reply(std::span<const std::byte> message) {
    if (message.size() != kLaneReplySize)
        return fail(
            EPROTO,
            fmt::format("persist reply of {} bytes, expected {}", message.size(), kLaneReplySize),
            ErrorSource::protocol);
    if (load_le<std::uint64_t>(message.data() + 8) != 0)
        return fail(EPROTO, "persist reply has non-zero reserved fields", ErrorSource::protocol);
    return LaneReply{load_le<std::uint32_t>(message.data()),
                     load_le<std::uint32_t>(message.data() + 4)};
}

} // namespace rpmem::protocol
