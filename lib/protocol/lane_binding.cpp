// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/lane_binding.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/little_endian.h"

namespace rpmem::protocol {

namespace {

constexpr std::array<std::byte, 4> kMagic{std::byte{'R'}, std::byte{'P'}, std::byte{'M'},
                                          std::byte{'L'}};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kTokenAt = 8;
constexpr std::size_t kLaneAt = kTokenAt + kSessionTokenLength;

} // namespace

std::array<std::byte, kLaneBindingSize> encode(const LaneBinding& binding) noexcept {
    std::array<std::byte, kLaneBindingSize> out{};
    std::memcpy(out.data(), kMagic.data(), kMagic.size());
    store_le(out.data() + 4, kVersion);
    std::memcpy(out.data() + kTokenAt, binding.token.data(), binding.token.size());
    store_le(out.data() + kLaneAt, binding.lane);
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
    if (auto version = load_le<std::uint32_t>(data.data() + 4); version != kVersion)
        return fail(EPROTO, fmt::format("lane binding version {} is not {}", version, kVersion),
                    ErrorSource::protocol);
    LaneBinding binding;
    std::memcpy(binding.token.data(), data.data() + kTokenAt, binding.token.size());
    binding.lane = load_le<std::uint32_t>(data.data() + kLaneAt);
    return binding;
}

} // namespace rpmem::protocol
