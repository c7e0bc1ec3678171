// SPDX-License-Identifier: BSD-3-Clause
#include "persist/request_handler.h"

#include "persist/word_copy.h"

namespace rpmem::persist {

using protocol::LaneOperation;
using protocol::LaneReply;

RequestHandler::Outcome RequestHandler::handle(std::span<const std::byte> message) noexcept {
    auto [sequence, request] = protocol::decode_lane_request(message, limits_);
    if (!request)
        return {LaneReply{sequence, static_cast<std::uint32_t>(request.error().errno_value())},
                true};

    std::span<std::byte> pool = pool_.bytes();
    Result<void> done;
    switch (request->operation) {
    case LaneOperation::persist_inline:
    case LaneOperation::deep_persist_inline:
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
    case LaneOperation::barrier:
        break;
    }

    if (!done)
        return {LaneReply{sequence, static_cast<std::uint32_t>(done.error().errno_value())}, false};
    if (request->wants_ack())
        return {LaneReply{sequence, 0}, false};
    return {};
}

} // namespace rpmem::persist
