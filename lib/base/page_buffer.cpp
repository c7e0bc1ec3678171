// SPDX-License-Identifier: BSD-3-Clause
#include "base/page_buffer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace rpmem {

Result<PageBuffer> PageBuffer::allocate(std::size_t size) {
    const std::size_t rounded = (size + kPage - 1) / kPage * kPage;
    auto* memory =
        static_cast<std::byte*>(std::aligned_alloc(kPage, rounded == 0 ? kPage : rounded));
    if (memory == nullptr)
        return fail(ENOMEM, fmt::format("allocating {} page-aligned bytes", rounded));
    std::memset(memory, 0, rounded);
    return PageBuffer(memory, rounded);
}

void PageBuffer::Free::operator()(std::byte* memory) const noexcept {
    std::free(memory);
}

} // namespace rpmem
