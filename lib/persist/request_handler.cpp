// SPDX-License-Identifier: BSD-3-Clause
#include "persist/request_handler.h"

#include "base/failpoint.h"
#include "persist/word_copy.h"

#ifdef RPMEM_FAILPOINTS
#include <atomic>
#include <cstdlib>
#include <string_view>
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

} // namespace
#endif

using protocol::LaneOperation;
using protocol::LaneReply;

RequestHandler::Outcome RequestHandler::handle(std::span<const std::byte> message) noexcept {
    auto [sequence, request] = protocol::decode_lane_request(message, limits_);
    if (!request)
        return {LaneReply{sequence, static_cast<std::uint32_t>(request.error().errno_value())},
                true};

    std::span<std::byte> pool = pool_.bytes();
    Result<void> done;
    std::uint64_t listed = 0; // a flush_list's bytes
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
    case LaneOperation::barrier:
        break;
    }

    if (!done)
        return {LaneReply{sequence, static_cast<std::uint32_t>(done.error().errno_value())}, false};
    std::uint64_t durable = request->length;
    if (request->operation == LaneOperation::barrier)
        durable = 0;
    else if (request->operation == LaneOperation::flush_list)
        durable = listed;
    if (request->wants_ack())
        return {LaneReply{sequence, 0}, false, durable};
    return {std::nullopt, false, durable};
}

} // namespace rpmem::persist
