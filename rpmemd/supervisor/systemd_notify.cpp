// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/systemd_notify.h"

#include <cstddef>
#include <cstring>

#include <sys/socket.h>
#include <sys/un.h>

#include "base/unique_fd.h"

namespace rpmem::daemon {

bool notify_systemd(const std::string& socket_path, std::string_view state) noexcept {
    if (socket_path.empty())
        return true;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof(address.sun_path) ||
        (socket_path[0] != '/' && socket_path[0] != '@'))
        return false;
    std::memcpy(address.sun_path, socket_path.data(), socket_path.size());
    if (socket_path[0] == '@')
        address.sun_path[0] = '\0'; // abstract namespace
    auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path.size());
    UniqueFd socket(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!socket.valid())
        return false;
    ssize_t sent = ::sendto(socket.get(), state.data(), state.size(), MSG_NOSIGNAL,
                            reinterpret_cast<const sockaddr*>(&address), length);
    return sent == static_cast<ssize_t>(state.size());
}

} // namespace rpmem::daemon
