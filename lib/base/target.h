// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace rpmem {

// Where a replica lives: the `[user@]host[:port]` of a REPLICA line and of rpmem_create()'s
// `target` argument. A value type; `host` holds an IPv6 address without its brackets. The port,
// when given, is rpmemd's listening port (PMDK used it for ssh).
struct Target {
    std::string user; // empty: no `user@` was given
    std::string host;
    std::optional<std::uint16_t> port;

    // The canonical text form: brackets around hosts that contain ':' when a port follows or the
    // host is IPv6, so that parse_target(to_string()) gives back the same Target.
    std::string to_string() const;

    friend bool operator==(const Target&, const Target&) = default;
};

inline constexpr std::size_t kMaxTargetUserLength = 32;  // useradd(8), as librpmem
inline constexpr std::size_t kMaxTargetHostLength = 255; // gethostname(2), as librpmem

// Parses `[user@]host[:port]` with librpmem's rules: `[addr]` or `[addr]:port` for IPv6; one
// ':' without brackets separates the port; more than one ':' without brackets is an IPv6 host
// without a port. Stricter than librpmem where it silently truncated or ignored text: empty
// user or host, whitespace, a second '@', text after `]`, and ports outside 1..65535 are errors
// (EINVAL) whose message says what was expected.
Result<Target> parse_target(std::string_view text);

} // namespace rpmem
