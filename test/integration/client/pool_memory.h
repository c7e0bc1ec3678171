// SPDX-License-Identifier: BSD-3-Clause
// The initiator's local pool of the client tests: page-aligned, zeroed, the size of
// TargetHost's one-part sets.
#pragma once

#include <cstddef>

#include <catch2/catch.hpp>

#include "base/page_buffer.h"

namespace rpmem::test {

inline constexpr std::size_t kPoolSize = 2 * 1024 * 1024;

inline PageBuffer pool_memory() {
    auto memory = PageBuffer::allocate(kPoolSize);
    REQUIRE(memory);
    return std::move(*memory);
}

} // namespace rpmem::test
