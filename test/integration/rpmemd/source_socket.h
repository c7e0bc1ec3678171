// SPDX-License-Identifier: BSD-3-Clause
// Plain TCP connections from a chosen loopback source address (the whole 127.0.0.0/8 is
// loopback), for tests that play a flooder next to a legitimate client on 127.0.0.1.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace rpmem::test {

// A TCP connection from `source` to 127.0.0.1:`port`; the fd, or -1 (errno set). With
// `wait = false` the socket is non-blocking and the connect may still be under way.
int connect_from(const std::string& source, std::uint16_t port, bool wait = true);

// Whether the server closed `fd` (EOF or reset) within `timeout`; false when it is still open.
bool closed_by_peer(int fd, std::chrono::milliseconds timeout);

} // namespace rpmem::test
