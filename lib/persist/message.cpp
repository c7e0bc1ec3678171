// SPDX-License-Identifier: BSD-3-Clause
#include "persist/message.h"

#include <bit>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace rpmem::persist {

namespace {

static_assert(std::endian::native == std::endian::little ||
              std::endian::native == std::endian::big);

template <typename T>
void store(std::span<std::byte> out, std::size_t at, T value) noexcept {
    if constexpr (std::endian::native == std::endian::big) {
        T swapped = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i)
            swapped |= static_cast<T>((value >> (8 * i)) & 0xff) << (8 * (sizeof(T) - 1 - i));
        value = swapped;
    }
    std::memcpy(out.data() + at, &value, sizeof(T));
}

template <typename T>
T load(std::span<const std::byte> in, std::size_t at) noexcept {
    T value;
    std::memcpy(&value, in.data() + at, sizeof(T));
    if constexpr (std::endian::native == std::endian::big) {
        T swapped = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i)
            swapped |= static_cast<T>((value >> (8 * i)) & 0xff) << (8 * (sizeof(T) - 1 - i));
        value = swapped;
    }
    return value;
}

bool known(std::uint8_t operation) noexcept {
    return operation >= static_cast<std::uint8_t>(Operation::persist_inline) &&
           operation <= static_cast<std::uint8_t>(Operation::barrier);
}

} // namespace

void encode(const Request& request, std::span<std::byte> out) noexcept {
    store<std::uint8_t>(out, 0, static_cast<std::uint8_t>(request.operation));
    store<std::uint8_t>(out, 1, request.flags);
    store<std::uint16_t>(out, 2, 0);
    store<std::uint32_t>(out, 4, request.sequence);
    store<std::uint64_t>(out, 8, request.offset);
    store<std::uint64_t>(out, 16, request.length);
    store<std::uint64_t>(out, 24, 0);
}

void encode(const Reply& reply, std::span<std::byte> out) noexcept {
    store<std::uint32_t>(out, 0, reply.sequence);
    store<std::uint32_t>(out, 4, reply.status);
    store<std::uint64_t>(out, 8, 0);
}

Result<Request> decode_request(std::span<const std::byte> message, std::uint64_t pool_size,
                               std::uint64_t inline_limit, std::uint64_t protected_prefix) {
    if (message.size() < kHeaderSize)
        return fail(EPROTO,
                    fmt::format("persist message of {} bytes is shorter than its {}-byte "
                                "header",
                                message.size(), kHeaderSize),
                    ErrorSource::protocol);
    auto operation = load<std::uint8_t>(message, 0);
    if (!known(operation))
        return fail(EPROTO, fmt::format("persist message has unknown operation {}", operation),
                    ErrorSource::protocol);
    Request request;
    request.operation = static_cast<Operation>(operation);
    request.flags = load<std::uint8_t>(message, 1);
    if ((request.flags & ~kAckRequested) != 0)
        return fail(EPROTO, fmt::format("persist message has unknown flags {:#x}", request.flags),
                    ErrorSource::protocol);
    if (load<std::uint16_t>(message, 2) != 0 || load<std::uint64_t>(message, 24) != 0)
        return fail(EPROTO, "persist message has non-zero reserved fields", ErrorSource::protocol);
    request.sequence = load<std::uint32_t>(message, 4);
    request.offset = load<std::uint64_t>(message, 8);
    request.length = load<std::uint64_t>(message, 16);

    std::uint64_t data_length = message.size() - kHeaderSize;
    if (request.carries_data()) {
        if (request.length > inline_limit)
            return fail(EPROTO,
                        fmt::format("persist message carries {} bytes inline, more than the "
                                    "lane's {}",
                                    request.length, inline_limit),
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

    if (request.offset > pool_size || request.length > pool_size - request.offset)
        return fail(EINVAL, fmt::format("range [{}, +{}) is outside the pool of {} bytes",
                                        request.offset, request.length, pool_size));
    if (request.carries_data() && request.length != 0 && request.offset < protected_prefix)
        return fail(EINVAL, fmt::format("range [{}, +{}) overlaps the pool header (first {} "
                                        "bytes)",
                                        request.offset, request.length, protected_prefix));
    return request;
}

Result<Reply> decode_reply(std::span<const std::byte> message) {
    if (message.size() != kReplySize)
        return fail(
            EPROTO,
            fmt::format("persist reply of {} bytes, expected {}", message.size(), kReplySize),
            ErrorSource::protocol);
    if (load<std::uint64_t>(message, 8) != 0)
        return fail(EPROTO, "persist reply has non-zero reserved fields", ErrorSource::protocol);
    return Reply{load<std::uint32_t>(message, 0), load<std::uint32_t>(message, 4)};
}

} // namespace rpmem::persist
