// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/local_address.h"

#include <array>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "base/unique_fd.h"

namespace rpmem::daemon {

std::optional<std::string> local_address_towards(std::string_view peer) {
    // A dual-stack listener reports IPv4 clients as IPv4-mapped IPv6 addresses; fabric
    // providers want the plain IPv4 form.
    constexpr std::string_view kMapped = "::ffff:";
    if (peer.starts_with(kMapped) && peer.find('.') != std::string_view::npos)
        peer.remove_prefix(kMapped.size());
    std::string text(peer);
    sockaddr_storage remote{};
    socklen_t length = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&remote);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&remote);
    if (::inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(9); // any port: connect() on UDP only picks a route
        length = sizeof(sockaddr_in);
    } else if (::inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(9);
        length = sizeof(sockaddr_in6);
    } else {
        return std::nullopt;
    }
    UniqueFd socket(::socket(remote.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!socket.valid() ||
        ::connect(socket.get(), reinterpret_cast<const sockaddr*>(&remote), length) != 0)
        return std::nullopt;
    sockaddr_storage local{};
    socklen_t local_length = sizeof(local);
    if (::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&local), &local_length) != 0)
        return std::nullopt;
    std::array<char, INET6_ADDRSTRLEN> buffer{};
    const void* address =
        local.ss_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&local)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&local)->sin6_addr);
    if (::inet_ntop(local.ss_family, address, buffer.data(), buffer.size()) == nullptr)
        return std::nullopt;
    return std::string(buffer.data());
}

bool is_wildcard_address(std::string_view host) noexcept {
    return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

} // namespace rpmem::daemon
