// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>

#include "persist/message.h"

namespace rpmem::persist {

// The shape of a lane's message traffic, shared by both halves.

// Messages a lane may have sent but not yet seen acknowledged: the target keeps this many
// receive buffers posted per lane, so the initiator never sends into a missing one.
inline constexpr std::size_t kLaneCredits = 4;

// Inline data a message may carry (the target tells the initiator its value in the create or
// open reply; this is what rpmemd offers). 64 KiB keeps 4 KiB persists to one message and
// large strict persists to few messages, at 4 x 64 KiB of receive buffers per lane.
inline constexpr std::size_t kDefaultInlineSize = 64 * 1024;

// A receive buffer: header plus inline data.
constexpr std::size_t message_slot_size(std::size_t inline_size) noexcept {
    return kHeaderSize + inline_size;
}

} // namespace rpmem::persist
