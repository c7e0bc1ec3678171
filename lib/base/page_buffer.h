// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "base/error.h"

namespace rpmem {

// Zero-filled heap memory that starts on a page and spans whole pages, owned: what the fabric
// registers (pools, lane and message buffers) and what libpmem-like code expects of a pool.
// Move-only; empty when default-constructed or moved from.
class PageBuffer {
public:
    static constexpr std::size_t kPage = 4096;

    // `size` bytes rounded up to whole pages; ENOMEM naming the size when there is no memory.
    static Result<PageBuffer> allocate(std::size_t size);

    PageBuffer() = default;

    std::byte* data() const noexcept { return memory_.get(); }
    std::size_t size() const noexcept { return size_; } // whole pages
    std::span<std::byte> bytes() const noexcept { return {memory_.get(), size_}; }
    explicit operator bool() const noexcept { return memory_ != nullptr; }
    // Gives the memory up (for a forked child that keeps it until it exits): std::free it.
    std::byte* release() noexcept {
        size_ = 0;
        return memory_.release();
    }

private:
    struct Free {
        void operator()(std::byte* memory) const noexcept;
    };
    PageBuffer(std::byte* memory, std::size_t size) noexcept
        : memory_(memory)
        , size_(size) {}

    std::unique_ptr<std::byte, Free> memory_;
    std::size_t size_ = 0;
};

} // namespace rpmem
