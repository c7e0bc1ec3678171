// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/port_sockets.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rpmem::fabric {

namespace {

std::uint16_t port_of(const sockaddr_storage& address) {
    if (address.ss_family == AF_INET)
        return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
    if (address.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
    return 0;
}

// The socket `fd` as a PortSocket; false for anything else (not a socket, not TCP over IP).
bool describe(int fd, PortSocket& socket) {
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode))
        return false;
    int type = 0;
    socklen_t length = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM)
        return false;
    sockaddr_storage local{};
    length = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0 ||
        (local.ss_family != AF_INET && local.ss_family != AF_INET6))
        return false;
    int listening = 0;
    length = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0)
        return false;
    socket.fd = fd;
    socket.inode = info.st_ino;
    socket.local_port = port_of(local);
    socket.listening = listening != 0;
    socket.peer_length = sizeof socket.peer;
    if (socket.listening ||
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&socket.peer), &socket.peer_length) != 0)
        socket.peer_length = 0;
    return true;
}

struct DirCloser {
    void operator()(DIR* dir) const noexcept { ::closedir(dir); }
};

} // namespace

Result<std::vector<PortSocket>> tcp_sockets() {
    std::unique_ptr<DIR, DirCloser> dir(::opendir("/proc/self/fd"));
    if (!dir)
        return fail(Error::from_errno(errno, "listing /proc/self/fd"));
    const int own = ::dirfd(dir.get());
    std::vector<PortSocket> found;
    while (const dirent* entry = ::readdir(dir.get())) {
        const std::string_view name = entry->d_name;
        int fd = -1;
        auto [rest, error] = std::from_chars(name.data(), name.data() + name.size(), fd);
        if (error != std::errc{} || rest != name.data() + name.size() || fd == own)
            continue;
        PortSocket socket;
        if (describe(fd, socket))
            found.push_back(socket);
    }
    return found;
}

bool shut_down(const PortSocket& socket) noexcept {
    // Our own reference first: from here on the number cannot come to mean another socket.
    const int copy = ::fcntl(socket.fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0)
        return false;
    struct stat info {};
    const bool same =
        ::fstat(copy, &info) == 0 && S_ISSOCK(info.st_mode) && info.st_ino == socket.inode;
    if (same)
        (void)::shutdown(copy, SHUT_RDWR);
    ::close(copy);
    return same;
}

bool is_peer(const PortSocket& socket, const void* peer, std::size_t length) noexcept {
    if (peer == nullptr || socket.peer_length == 0)
        return false;
    const auto* other = static_cast<const sockaddr*>(peer);
    if (other->sa_family != socket.peer.ss_family)
        return false;
    if (other->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(socket.peer);
        const auto* b = static_cast<const sockaddr_in*>(peer);
        return a.sin_port == b->sin_port && a.sin_addr.s_addr == b->sin_addr.s_addr;
    }
    if (other->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(socket.peer);
        const auto* b = static_cast<const sockaddr_in6*>(peer);
        return a.sin6_port == b->sin6_port &&
               std::memcmp(&a.sin6_addr, &b->sin6_addr, sizeof a.sin6_addr) == 0;
    }
    return false;
}

} // namespace rpmem::fabric
