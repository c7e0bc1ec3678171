// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the data-path decoders the target runs on bytes an initiator chose: any
// byte string is decoded as a persist request (under several lane limits, including a pool that
// reaches 2^64 - 1, where a range check that adds offset and length would wrap), as a persist
// reply, and as a lane binding. Whatever decodes must satisfy the checks the caller relies on
// (every range, a flush list's each, inside the pool without wrapping and clear of the protected
// header; data length as announced) and re-encode to the bytes it came from; a crash, a
// sanitizer report or a trap is a finding.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "protocol/lane_binding.h"
#include "protocol/lane_message.h"

namespace {

namespace protocol = rpmem::protocol;
using protocol::LaneLimits;

constexpr std::array<LaneLimits, 4> kLimits{{
    {2u << 20, 64 * 1024, 4096},                                 // a 2 MiB pool with a header
    {64, 64, 0},                                                 // a tiny pool without one
    {std::numeric_limits<std::uint64_t>::max(), 1u << 20, 4096}, // ranges near 2^64
    {0, 0, 0},                                                   // an empty pool: only empty ranges
}};

// The range lies inside the pool, computed without a wrapping sum, and clear of the header.
void check_pool_range(std::uint64_t offset, std::uint64_t length, const LaneLimits& limits) {
    if (offset > limits.pool_size || length > limits.pool_size - offset)
        __builtin_trap();
    if (length != 0 && offset < limits.protected_prefix)
        __builtin_trap();
}

void check_request(std::span<const std::byte> input, const LaneLimits& limits) {
    auto [sequence, decoded] = protocol::decode_lane_request(input, limits);
    if (!decoded)
        return;
    const protocol::LaneRequest& request = *decoded;
    // The id handed back with the result is the message's own sequence number.
    if (sequence != request.sequence)
        __builtin_trap();
    const std::size_t data = input.size() - protocol::kLaneHeaderSize;
    if (request.carries_payload()) {
        if (request.length != data || request.length > limits.inline_limit)
            __builtin_trap();
    } else if (data != 0) {
        __builtin_trap();
    }
    if (request.operation == protocol::LaneOperation::flush_list) {
        // A flush list's header names no pool range; every listed range must be one.
        if (request.offset != 0 || request.length == 0 ||
            request.length % protocol::kLaneRangeSize != 0)
            __builtin_trap();
        for (std::size_t i = 0; i < protocol::flush_list_size(request); ++i) {
            const protocol::LaneRange range = protocol::flush_list_range(input, i);
            check_pool_range(range.offset, range.length, limits);
        }
    } else if (request.operation == protocol::LaneOperation::persist_records) {
        // The header's offset is the initiator's lag, no range; every record is whole, padded
        // and a pool range, and the records fill the data exactly.
        std::size_t at = 0;
        while (at < request.length) {
            if (request.length - at < protocol::kLaneRecordHeaderSize)
                __builtin_trap();
            const protocol::LaneRecord record = protocol::lane_record_at(input, at);
            const std::size_t size = protocol::lane_record_size(record.length);
            if (record.length == 0 || size > request.length - at ||
                (record.flags & ~protocol::kRecordDeep) != 0)
                __builtin_trap();
            check_pool_range(record.offset, record.length, limits);
            at += size;
        }
        if (at != request.length || at == 0)
            __builtin_trap();
    } else {
        check_pool_range(request.offset, request.length, limits);
    }
    // The header encoding is canonical.
    std::array<std::byte, protocol::kLaneHeaderSize> again{};
    protocol::encode(request, again);
    if (!std::equal(again.begin(), again.end(), input.begin()))
        __builtin_trap();
}

void check_reply(std::span<const std::byte> input) {
    auto decoded = protocol::decode_lane_reply(input);
    if (!decoded)
        return;
    std::array<std::byte, protocol::kLaneReplySize> again{};
    protocol::encode(*decoded, again);
    if (input.size() != again.size() || !std::equal(again.begin(), again.end(), input.begin()))
        __builtin_trap();
}

void check_binding(std::span<const std::byte> input) {
    auto decoded = protocol::decode_lane_binding(input);
    if (!decoded)
        return;
    // Providers may pad private data: the first kLaneBindingSize bytes are the binding.
    const auto again = protocol::encode(*decoded);
    if (input.size() < again.size() || !std::equal(again.begin(), again.end(), input.begin()))
        __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
    for (const LaneLimits& limits : kLimits)
        check_request(input, limits);
    check_reply(input);
    check_binding(input);
    return 0;
}
