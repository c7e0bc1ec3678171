// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/mapped_range.h"

#include <cerrno>
#include <cstring>

#include <sys/mman.h>

#include "poolset/poolset_logger.h"

namespace rpmem::poolset {

MappedRange& MappedRange::operator=(MappedRange&& other) noexcept {
    if (this != &other) {
        reset();
        address_ = std::exchange(other.address_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

MappedRange::~MappedRange() {
    reset();
}

void MappedRange::reset() noexcept {
    if (address_ != nullptr && size_ != 0 && ::munmap(address_, size_) != 0) {
        // Only a bug can make munmap fail here; say so and go on.
        int error = errno;
        logger().warn("munmap of {} bytes at {}: {}", size_, static_cast<void*>(address_),
                      std::strerror(error));
    }
    address_ = nullptr;
    size_ = 0;
}

} // namespace rpmem::poolset
