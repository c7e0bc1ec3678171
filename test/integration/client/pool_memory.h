// SPDX-License-Identifier: BSD-3-Clause
// The initiator's local pool of the client tests: page-aligned, zeroed, the size of
// TargetHost's one-part sets.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <catch2/catch.hpp>

namespace rpmem::test {

inline constexpr std::size_t kPoolSize = 2 * 1024 * 1024;

struct AlignedFree {
    void operator()(void* memory) const noexcept { std::free(memory); }
};

inline std::unique_ptr<void, AlignedFree> pool_memory() {
    void* memory = std::aligned_alloc(4096, kPoolSize);
    REQUIRE(memory != nullptr);
    std::memset(memory, 0, kPoolSize);
    return std::unique_ptr<void, AlignedFree>(memory);
}

} // namespace rpmem::test
