// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/boundary/packet_socket.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include "protocol/worker_message.h"

namespace rpmem::daemon {

Result<std::pair<PacketSocket, PacketSocket>> PacketSocket::pair() {
    int fds[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
        return fail(Error::from_errno(errno, "making the worker's socket pair"));
    return std::pair{PacketSocket(UniqueFd(fds[0])), PacketSocket(UniqueFd(fds[1]))};
}

Result<void> PacketSocket::send(std::span<const std::uint8_t> bytes,
                                std::span<const int> fds) const {
    if (fds.size() > kMaxFds)
        return fail(EINVAL,
                    fmt::format("{} descriptors in one packet (limit {})", fds.size(), kMaxFds));
    iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    std::vector<std::byte> control;
    if (!fds.empty()) {
        control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
        message.msg_control = control.data();
        message.msg_controllen = control.size();
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
    }
    for (;;) {
        ssize_t sent = ::sendmsg(fd_.get(), &message, MSG_NOSIGNAL);
        if (sent == static_cast<ssize_t>(bytes.size()))
            return {};
        if (sent < 0 && errno == EINTR)
            continue;
        return fail(Error::from_errno(sent < 0 ? errno : EIO, "sending to the worker socket"));
    }
}

Result<PacketSocket::Packet>
PacketSocket::receive(std::optional<std::chrono::milliseconds> timeout) const {
    if (timeout) {
        pollfd waiting{fd_.get(), POLLIN, 0};
        int ready = 0;
        do {
            ready = ::poll(&waiting, 1, static_cast<int>(timeout->count()));
        } while (ready < 0 && errno == EINTR);
        if (ready < 0)
            return fail(Error::from_errno(errno, "waiting on the worker socket"));
        if (ready == 0)
            return fail(
                ETIMEDOUT,
                fmt::format("no answer on the worker socket within {} ms", timeout->count()),
                ErrorSource::system);
    }
    Packet packet;
    packet.bytes.resize(protocol::kMaxWorkerMessage + 1);
    iovec iov{packet.bytes.data(), packet.bytes.size()};
    std::vector<std::byte> control(CMSG_SPACE(sizeof(int) * kMaxFds));
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t got = -1;
    do {
        got = ::recvmsg(fd_.get(), &message, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    if (got < 0)
        return fail(Error::from_errno(errno, "receiving from the worker socket"));
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS)
            continue;
        std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            packet.fds.emplace_back(fd);
        }
    }
    if (got == 0 && packet.fds.empty())
        return fail(ECONNRESET, "the other end closed the worker socket", ErrorSource::system);
    if ((message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
        static_cast<std::size_t>(got) > protocol::kMaxWorkerMessage)
        return fail(EPROTO, "a truncated packet on the worker socket", ErrorSource::protocol);
    packet.bytes.resize(static_cast<std::size_t>(got));
    return packet;
}

} // namespace rpmem::daemon
