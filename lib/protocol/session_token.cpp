// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/session_token.h"

namespace rpmem::protocol {

bool same_token(const SessionToken& a, const SessionToken& b) noexcept {
    // No early exit: the loop's time does not depend on where the tokens differ.
    std::uint8_t difference = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        difference |= static_cast<std::uint8_t>(a[i] ^ b[i]);
    return difference == 0;
}

} // namespace rpmem::protocol
