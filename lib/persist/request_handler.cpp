// SPDX-License-Identifier: BSD-3-Clause
#include "persist/request_handler.h"

#include "base/failpoint.h"
#include "persist/word_copy.h"

#ifdef RPMEM_FAILPOINTS
#include <atomic>
#include <cstdlib>
#include <string_view>
#include <vector>
#endif

namespace rpmem::persist {

#ifdef RPMEM_FAILPOINTS
namespace {

// Test builds only (meson -Dfailpoints=true): RPMEM_FAILPOINT=ack-without-persist makes the
// target acknowledge every 7th inline persist without copying or flushing it, so that the fault
// tests can prove their checker catches a lost acknowledged record. Read once, when the
// program loads; with the variable unset the persist path costs one branch on this bool.
const bool ack_without_persist = failpoint_is("ack-without-persist");

// Counts inline persists across every lane of the process while the failpoint is on.
std::atomic<std::uint64_t> inline_persists{0};

bool skip_this_persist() noexcept {
    return ack_without_persist && inline_persists.fetch_add(1, std::memory_order_relaxed) % 7 == 6;
}

// RPMEM_FAILPOINT=apply-records-reversed applies each persist_records message's records last
// first: the replica is then no prefix of what was sent, which the asynchronous replication
// test must catch.
const bool apply_records_reversed = failpoint_is("apply-records-reversed");

} // namespace
#endif

using protocol::LaneOperation;
using protocol::LaneReply;

// In order, each record durable before the next is written: whatever moment the target stops
// at, the pool holds a prefix of the records (with 8-byte atomicity inside the one being
// applied).
Result<void> RequestHandler::apply_records(std::span<const std::byte> message, std::uint64_t length,
                                           std::uint64_t& applied) const noexcept {
    std::span<std::byte> pool = pool_.bytes();
    const auto apply = [&](std::size_t at) -> Result<void> {
        const protocol::LaneRecord record = protocol::lane_record_at(message, at);
        applied += record.length;
        copy_aligned_words(pool.data() + record.offset,
                           protocol::lane_record_data(message, at, record).data(), record.length);
        return (record.flags & protocol::kRecordDeep) != 0
                   ? pool_.deep_persist(record.offset, record.length)
                   : pool_.persist(record.offset, record.length);
    };
#ifdef RPMEM_FAILPOINTS
    if (apply_records_reversed) {
        std::vector<std::size_t> starts;
        for (std::size_t at = 0; at < length;
             at += protocol::lane_record_size(protocol::lane_record_at(message, at).length))
            starts.push_back(at);
        Result<void> done;
        for (auto at = starts.rbegin(); at != starts.rend() && done; ++at)
            done = apply(*at);
        return done;
    }
#endif
    Result<void> done;
    for (std::size_t at = 0; at < length && done;
         at += protocol::lane_record_size(protocol::lane_record_at(message, at).length))
        done = apply(at);
    return done;
}

RequestHandler::Outcome RequestHandler::handle(std::span<const std::byte> message) noexcept {
    auto [sequence, request] = protocol::decode_lane_request(message, limits_);
    if (!request)
        return {LaneReply{sequence, static_cast<std::uint32_t>(request.error().errno_value())},
                true};

    std::span<std::byte> pool = pool_.bytes();
    Result<void> done;
    std::uint64_t listed = 0; // a flush_list's or a record list's bytes
    switch (request->operation) {
    case LaneOperation::persist_inline:
    case LaneOperation::deep_persist_inline:
#ifdef RPMEM_FAILPOINTS
        if (skip_this_persist())
            break; // acknowledged below, never landed: the failpoint's lie
#endif
        copy_aligned_words(pool.data() + request->offset,
                           message.data() + protocol::kLaneHeaderSize, request->length);
        done = request->operation == LaneOperation::persist_inline
                   ? pool_.persist(request->offset, request->length)
                   : pool_.deep_persist(request->offset, request->length);
        break;
    case LaneOperation::flush:
        done = pool_.persist(request->offset, request->length);
        break;
    case LaneOperation::deep_flush:
        done = pool_.deep_persist(request->offset, request->length);
        break;
    case LaneOperation::flush_list:
        for (std::size_t i = 0; i < protocol::flush_list_size(*request) && done; ++i) {
            const protocol::LaneRange range = protocol::flush_list_range(message, i);
            done = pool_.persist(range.offset, range.length);
            listed += range.length;
        }
        break;
    case LaneOperation::persist_records:
        done = apply_records(message, request->length, listed);
        break;
    case LaneOperation::barrier:
        break;
    }

    if (!done)
        return {LaneReply{sequence, static_cast<std::uint32_t>(done.error().errno_value())}, false};
    std::uint64_t durable = request->length;
    if (request->operation == LaneOperation::barrier)
        durable = 0;
    else if (request->operation == LaneOperation::flush_list ||
             request->operation == LaneOperation::persist_records)
        durable = listed;
    std::optional<std::uint64_t> lag;
    if (request->operation == LaneOperation::persist_records)
        lag = request->offset;
    if (request->wants_ack())
        return {LaneReply{sequence, 0}, false, durable, lag};
    return {std::nullopt, false, durable, lag};
}

} // namespace rpmem::persist
