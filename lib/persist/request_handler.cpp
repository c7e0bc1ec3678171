// SPDX-License-Identifier: BSD-3-Clause
#include "persist/request_handler.h"

#include <array>
#include <cerrno>
#include <cstring>

#include "persist/word_copy.h"

namespace rpmem::persist {

namespace {

// The sequence number of a message that failed to decode, for the error reply: the client
// matches replies by it. Zero when even the header is incomplete.
std::uint32_t raw_sequence(std::span<const std::byte> message) noexcept {
    if (message.size() < kHeaderSize)
        return 0;
    std::array<std::byte, kHeaderSize> header{};
    std::memcpy(header.data(), message.data(), kHeaderSize);
    std::uint32_t sequence = 0;
    for (int i = 3; i >= 0; --i)
        sequence = (sequence << 8) | static_cast<std::uint32_t>(header[4 + i]);
    return sequence;
}

} // namespace

RequestHandler::Outcome RequestHandler::handle(std::span<const std::byte> message) noexcept {
    std::span<std::byte> pool = pool_.bytes();
    auto request = decode_request(message, pool.size(), inline_limit_, protected_prefix_);
    if (!request)
        return {
            Reply{raw_sequence(message), static_cast<std::uint32_t>(request.error().errno_value())},
            true};

    Result<void> done;
    switch (request->operation) {
    case Operation::persist_inline:
    case Operation::deep_persist_inline:
        copy_aligned_words(pool.data() + request->offset, message.data() + kHeaderSize,
                           request->length);
        done = request->operation == Operation::persist_inline
                   ? pool_.persist(request->offset, request->length)
                   : pool_.deep_persist(request->offset, request->length);
        break;
    case Operation::flush:
        done = pool_.persist(request->offset, request->length);
        break;
    case Operation::deep_flush:
        done = pool_.deep_persist(request->offset, request->length);
        break;
    case Operation::barrier:
        break;
    }

    if (!done)
        return {Reply{request->sequence, static_cast<std::uint32_t>(done.error().errno_value())},
                false};
    if (request->wants_ack())
        return {Reply{request->sequence, 0}, false};
    return {};
}

} // namespace rpmem::persist
