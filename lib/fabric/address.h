// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rpmem::fabric {

// "127.0.0.1:7636" or "[fd00::2]:7636" for an FI_SOCKADDR_IN/IN6 address as libfabric hands it
// out (fi_info src_addr/dest_addr, fi_getname); "(unknown address)" for anything else. For
// messages and logs.
std::string format_address(const void* address, std::size_t length);

// The port of such an address, in host order; nullopt for other formats.
std::optional<std::uint16_t> address_port(const void* address, std::size_t length);

} // namespace rpmem::fabric
