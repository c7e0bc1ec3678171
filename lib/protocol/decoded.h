// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>

#include "base/error.h"

namespace rpmem::protocol {

// What a decoder of a message with a fixed header returns: the message, or why it was
// refused, and in both cases the id its sender gave it (a frame's request id, a lane message's
// sequence number; 0 when the bytes were too few to hold it), so that a refusal can still be
// answered by id. No caller ever re-parses raw bytes for it.
template <typename T>
struct Decoded {
    std::uint32_t id = 0;
    Result<T> result;
};

} // namespace rpmem::protocol
