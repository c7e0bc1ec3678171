// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rpmem {

// Text from a client (pool set names, identities, certificate subjects, software names, and
// error messages that quote them) made safe for one log line: it can neither end the line nor
// drive a terminal, and it is bounded.
//
// Every byte below 0x20, 0x7f and every byte from 0x80 up becomes a visible escape (\n, \r,
// \t, \xHH; so UTF-8 text shows as its bytes: safer than deciding which code points a log
// viewer renders harmlessly, e.g. C1 controls or bidirectional overrides); a backslash becomes
// "\\" so that an escape in the output always means an escaped byte. Only the first
// `max_bytes` bytes of `text` are shown; the rest is counted: "…(N more bytes)".
// Pure; thread-safe.
inline constexpr std::size_t kMaxLoggedTextBytes = 256;

std::string escape_for_log(std::string_view text, std::size_t max_bytes = kMaxLoggedTextBytes);

} // namespace rpmem
