// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rpmem::daemon {

// The local IP address this host uses to reach `peer` (an IPv4 or IPv6 address), as text: the
// source address the kernel's routing picks for a UDP socket connected to it (nothing is
// sent). For a TCP connection that `peer` opened, this is the address the connection arrived
// on except with asymmetric routing. Nothing when `peer` is not an address or no route exists.
std::optional<std::string> local_address_towards(std::string_view peer);

// Whether `host` is a wildcard listen address ("0.0.0.0", "::", empty).
bool is_wildcard_address(std::string_view host) noexcept;

} // namespace rpmem::daemon
