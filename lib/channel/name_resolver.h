// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include "base/error.h"

namespace rpmem::channel {

// The addresses of `host` (a name or a numeric IPv4/IPv6 address) at `port`, within
// `deadline`. getaddrinfo() cannot be interrupted, and Asio's resolver waits for it however
// long the system's resolver settings make it; this asks glibc's asynchronous resolver and
// stops waiting at the deadline (ETIMEDOUT naming the host). A name that does not resolve is
// EHOSTUNREACH with the resolver's own words.
Result<std::vector<boost::asio::ip::tcp::endpoint>>
resolve_host(const std::string& host, std::uint16_t port,
             std::chrono::steady_clock::time_point deadline);

} // namespace rpmem::channel
