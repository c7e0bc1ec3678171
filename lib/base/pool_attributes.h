// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace rpmem {

// The pool attributes of PMDK's `struct rpmem_pool_attr` as a value type: what the initiator
// tells the target to write into the target's pool headers, and what open returns. All zero
// means "the pool has no headers" (OPTION NOHDRS). The C layout (104 bytes) lives only in
// lib/capi; the wire layout only in lib/protocol; the media layout only in poolset/.
struct PoolAttributes {
    static constexpr std::size_t kSignatureLength = 8;
    static constexpr std::size_t kUuidLength = 16;
    static constexpr std::size_t kUserFlagsLength = 16;

    using Uuid = std::array<std::uint8_t, kUuidLength>;

    std::array<char, kSignatureLength> signature{};
    std::uint32_t major = 0;
    std::uint32_t compat_features = 0;
    std::uint32_t incompat_features = 0;
    std::uint32_t ro_compat_features = 0;
    Uuid poolset_uuid{};
    Uuid uuid{};                                             // part 0 of the target's replica
    Uuid next_uuid{};                                        // next replica in the ring
    Uuid prev_uuid{};                                        // previous replica in the ring
    std::array<std::uint8_t, kUserFlagsLength> user_flags{}; // the pool header's arch flags

    bool is_zero() const noexcept { return *this == PoolAttributes{}; }

    friend bool operator==(const PoolAttributes&, const PoolAttributes&) = default;
};

} // namespace rpmem
