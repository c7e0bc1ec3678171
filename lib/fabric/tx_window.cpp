// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/tx_window.h"

#include <algorithm>

namespace rpmem::fabric {

TxWindow::TxWindow(std::size_t depth)
    : ring_(std::max<std::size_t>(depth, 1)) {}

TxWindow::Decision TxWindow::plan(bool wants_completion) const noexcept {
    if (in_flight() >= depth())
        return Decision::full;
    if (wants_completion)
        return Decision::signalled;
    if (in_flight() + 1 == depth() && count_ == 0)
        return Decision::signalled;
    return Decision::unsignalled;
}

void TxWindow::on_posted(bool signalled) noexcept {
    ++posted_;
    if (signalled) {
        ring_[(head_ + count_) % ring_.size()] = posted_;
        ++count_;
    }
}

void TxWindow::on_completed() noexcept {
    if (count_ == 0)
        return; // a completion we did not count (cannot happen when every post goes through us)
    retired_ = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --count_;
}

} // namespace rpmem::fabric
