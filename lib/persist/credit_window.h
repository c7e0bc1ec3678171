// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>

#include "protocol/lane_message.h"

namespace rpmem::persist {

// The initiator's account of one lane's messages (pure logic, no I/O): which sequence number
// the next message gets, whether it must ask for an acknowledgement, whether the target has a
// free receive buffer for it, and what a reply acknowledges. Sequence numbers wrap.
//  - At most kLaneCredits messages are unacknowledged (the target posts that many receives).
//  - Every kLaneCredits / 2 messages one asks for an acknowledgement, so that credits come back
//    while a long range is still being sent; the caller asks for one on the last message.
//  - The target answers in order, so a reply for sequence s acknowledges every message up to s.
class CreditWindow {
public:
    static constexpr std::uint32_t kCredits = protocol::kLaneCredits;

    // What the next message is to carry.
    struct Ticket {
        std::uint32_t sequence = 0;
        bool ask_ack = false;
    };

    // `before_first`: the sequence number before the first message's (any value: the window
    // only compares differences, so it works across the wrap from 2^32 - 1 to 0).
    explicit CreditWindow(std::uint32_t before_first = 0) noexcept
        : sent_(before_first)
        , acknowledged_(before_first)
        , ack_requested_(before_first) {}

    bool has_credit() const noexcept { return sent_ - acknowledged_ < kCredits; }
    // The ticket for the next message; `ask_ack` is the caller's wish. Call sent() once the
    // message is posted; a ticket not sent changes nothing.
    Ticket next(bool ask_ack) const noexcept;
    void sent(const Ticket& ticket) noexcept;

    // A reply naming `sequence`. False when it names a message not sent yet (a broken or
    // hostile target): the lane must fail, as its credits cannot be trusted any more. A reply
    // to an older message than the last acknowledged one changes nothing.
    bool acknowledge(std::uint32_t sequence) noexcept;

    bool all_acknowledged() const noexcept { return acknowledged_ == sent_; }
    // The last message sent asked for an acknowledgement (so waiting for it needs no barrier).
    bool last_asked_ack() const noexcept { return ack_requested_ == sent_; }
    bool acknowledged(std::uint32_t sequence) const noexcept;
    std::uint32_t last_sent() const noexcept { return sent_; }

private:
    std::uint32_t sent_;
    std::uint32_t acknowledged_;
    std::uint32_t ack_requested_;
    std::uint32_t since_ack_request_ = 0;
};

} // namespace rpmem::persist
