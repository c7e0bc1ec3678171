// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/address.h"

#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace rpmem::fabric {

std::string format_address(const void* address, std::size_t length) {
    if (address == nullptr || length < sizeof(sa_family_t))
        return "(unknown address)";
    sa_family_t family;
    std::memcpy(&family, address, sizeof family);
    char text[INET6_ADDRSTRLEN] = {};
    if (family == AF_INET && length >= sizeof(sockaddr_in)) {
        sockaddr_in in;
        std::memcpy(&in, address, sizeof in);
        inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
        return std::string(text) + ":" + std::to_string(ntohs(in.sin_port));
    }
    if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
        sockaddr_in6 in6;
        std::memcpy(&in6, address, sizeof in6);
        inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
        return "[" + std::string(text) + "]:" + std::to_string(ntohs(in6.sin6_port));
    }
    return "(unknown address)";
}

std::optional<std::uint16_t> address_port(const void* address, std::size_t length) {
    if (address == nullptr || length < sizeof(sa_family_t))
        return std::nullopt;
    sa_family_t family;
    std::memcpy(&family, address, sizeof family);
    if (family == AF_INET && length >= sizeof(sockaddr_in)) {
        sockaddr_in in;
        std::memcpy(&in, address, sizeof in);
        return ntohs(in.sin_port);
    }
    if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
        sockaddr_in6 in6;
        std::memcpy(&in6, address, sizeof in6);
        return ntohs(in6.sin6_port);
    }
    return std::nullopt;
}

} // namespace rpmem::fabric
