// SPDX-License-Identifier: BSD-3-Clause
#include "persist/lane_binding.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace rpmem::persist {

namespace {

constexpr std::array<std::byte, 4> kMagic{std::byte{'R'}, std::byte{'P'}, std::byte{'M'},
                                          std::byte{'L'}};
constexpr std::uint32_t kVersion = 1;

void put_u32(std::byte* out, std::uint32_t value) noexcept {
    for (int i = 0; i < 4; ++i)
        out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

std::uint32_t get_u32(const std::byte* in) noexcept {
    std::uint32_t value = 0;
    for (int i = 3; i >= 0; --i)
        value = (value << 8) | static_cast<std::uint32_t>(in[i]);
    return value;
}

} // namespace

std::array<std::byte, kLaneBindingSize> encode(const LaneBinding& binding) noexcept {
    std::array<std::byte, kLaneBindingSize> out{};
    std::memcpy(out.data(), kMagic.data(), kMagic.size());
    put_u32(out.data() + 4, kVersion);
    std::memcpy(out.data() + 8, binding.token.data(), binding.token.size());
    put_u32(out.data() + 8 + LaneBinding::kTokenLength, binding.lane);
    return out;
}

Result<LaneBinding> decode_lane_binding(std::span<const std::byte> data) {
    // Providers may pad private data: take the first kLaneBindingSize bytes.
    if (data.size() < kLaneBindingSize)
        return fail(
            EPROTO,
            fmt::format("lane binding of {} bytes, expected {}", data.size(), kLaneBindingSize),
            ErrorSource::protocol);
    if (std::memcmp(data.data(), kMagic.data(), kMagic.size()) != 0)
        return fail(EPROTO, "lane binding lacks its magic", ErrorSource::protocol);
    if (auto version = get_u32(data.data() + 4); version != kVersion)
        return fail(EPROTO, fmt::format("lane binding version {} is not {}", version, kVersion),
                    ErrorSource::protocol);
    LaneBinding binding;
    std::memcpy(binding.token.data(), data.data() + 8, binding.token.size());
    binding.lane = get_u32(data.data() + 8 + LaneBinding::kTokenLength);
    return binding;
}

bool same_token(const std::array<std::uint8_t, LaneBinding::kTokenLength>& a,
                const std::array<std::uint8_t, LaneBinding::kTokenLength>& b) noexcept {
    std::uint8_t difference = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        difference |= static_cast<std::uint8_t>(a[i] ^ b[i]);
    return difference == 0;
}

} // namespace rpmem::persist
