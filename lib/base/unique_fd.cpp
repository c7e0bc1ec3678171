// SPDX-License-Identifier: BSD-3-Clause
#include "base/unique_fd.h"

#include <unistd.h>

namespace rpmem {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

UniqueFd::~UniqueFd() {
    reset();
}

void UniqueFd::reset() noexcept {
    if (fd_ >= 0) {
        // close() may report EINTR or EIO but the descriptor is released either way.
        (void)::close(fd_);
        fd_ = -1;
    }
}

} // namespace rpmem
