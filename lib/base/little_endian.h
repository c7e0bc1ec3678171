// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace rpmem {

// The one little-endian load and store of the project: every wire format (lib/protocol) and
// the on-media pool header (poolset/) are written with these. Byte by byte, so alignment and
// the host's byte order never matter; compilers turn them into single moves.
template <typename Byte>
concept OneByte = sizeof(Byte) == 1;

template <std::unsigned_integral T, OneByte Byte>
constexpr T load_le(const Byte* in) noexcept {
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
        value |= static_cast<T>(static_cast<T>(static_cast<std::uint8_t>(in[i])) << (8 * i));
    return value;
}

template <std::unsigned_integral T, OneByte Byte>
constexpr void store_le(Byte* out, T value) noexcept {
    for (std::size_t i = 0; i < sizeof(T); ++i)
        out[i] = static_cast<Byte>(static_cast<std::uint8_t>(value >> (8 * i)));
}

} // namespace rpmem
