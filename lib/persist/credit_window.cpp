// SPDX-License-Identifier: BSD-3-Clause
#include "persist/credit_window.h"

namespace rpmem::persist {

namespace {

// `a` is at or after `b` when a - b is a small forward step.
bool at_or_after(std::uint32_t a, std::uint32_t b) noexcept {
    return static_cast<std::int32_t>(a - b) >= 0;
}

} // namespace

CreditWindow::Ticket CreditWindow::next(bool ask_ack) const noexcept {
    return {sent_ + 1, ask_ack || since_ack_request_ + 1 >= kCredits / 2};
}

void CreditWindow::sent(const Ticket& ticket) noexcept {
    sent_ = ticket.sequence;
    if (ticket.ask_ack) {
        ack_requested_ = sent_;
        since_ack_request_ = 0;
    } else {
        ++since_ack_request_;
    }
}

bool CreditWindow::acknowledge(std::uint32_t sequence) noexcept {
    if (!at_or_after(sent_, sequence))
        return false;
    if (at_or_after(sequence, acknowledged_))
        acknowledged_ = sequence;
    return true;
}

bool CreditWindow::acknowledged(std::uint32_t sequence) const noexcept {
    return at_or_after(acknowledged_, sequence);
}

} // namespace rpmem::persist
