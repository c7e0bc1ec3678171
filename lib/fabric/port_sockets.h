// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <sys/socket.h>
#include <sys/types.h>

#include "base/error.h"

namespace rpmem::fabric {

// One TCP socket of this process bound to a local port, as found by tcp_sockets().
struct PortSocket {
    int fd = -1;
    ino_t inode = 0; // identifies the socket itself, whatever its descriptor number becomes
    std::uint16_t local_port = 0;
    bool listening = false;
    sockaddr_storage peer{}; // nothing for a listening socket
    socklen_t peer_length = 0;
};

// The IPv4 and IPv6 stream sockets this process has open (a scan of /proc/self/fd), with their
// local ports and peers. For what no libfabric call reaches: the connections a provider accepted
// on a listener but has not reported as connection requests yet. libfabric 1.17's tcp provider
// keeps such a connection (its socket and state) until the peer sends its connection request or
// fails, and closing the listener, its event queue or its fabric frees neither: a peer that
// connects and stays silent, or closes before the provider looked, leaks a descriptor for good,
// and one that speaks after the listener closed makes the provider use the freed listener
// (lib/fabric/README.md, "Listeners"). Errors: reading /proc/self/fd.
Result<std::vector<PortSocket>> tcp_sockets();

// Shuts `socket` down both ways if its descriptor still is that socket (a duplicate of the
// descriptor is checked against the inode first, so a number reused since the scan is never
// touched); its owner (the provider) then sees the end of the stream and closes it itself.
// False when the descriptor is gone or names another file now.
bool shut_down(const PortSocket& socket) noexcept;

// Whether `peer` is the socket's peer (same family, address and port).
bool is_peer(const PortSocket& socket, const void* peer, std::size_t length) noexcept;

} // namespace rpmem::fabric
