// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace rpmem::poolset {

// Owns one range of address space obtained with mmap and unmaps it on destruction. Move-only;
// not thread-safe.
class MappedRange {
public:
    MappedRange() noexcept = default;
    MappedRange(void* address, std::size_t size) noexcept
        : address_(static_cast<std::uint8_t*>(address))
        , size_(size) {}
    MappedRange(MappedRange&& other) noexcept
        : address_(std::exchange(other.address_, nullptr))
        , size_(std::exchange(other.size_, 0)) {}
    MappedRange& operator=(MappedRange&& other) noexcept;
    MappedRange(const MappedRange&) = delete;
    MappedRange& operator=(const MappedRange&) = delete;
    ~MappedRange();

    std::uint8_t* data() const noexcept { return address_; }
    std::size_t size() const noexcept { return size_; }
    void reset() noexcept;

private:
    std::uint8_t* address_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace rpmem::poolset
