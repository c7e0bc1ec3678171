// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/error.h"
#include "base/unique_fd.h"

namespace rpmem::daemon {

// One end of the AF_UNIX SOCK_SEQPACKET socket between rpmemd's supervisor and a worker: whole
// packets of at most protocol::kMaxWorkerMessage bytes, each optionally carrying descriptors
// (SCM_RIGHTS). Owns its descriptor. A packet or descriptor list that does not fit is an error,
// never a silent truncation. Not thread-safe: one caller at a time (WorkerProcess serialises).
class PacketSocket {
public:
    // Both ends of a new socket pair (close-on-exec).
    static Result<std::pair<PacketSocket, PacketSocket>> pair();

    explicit PacketSocket(UniqueFd fd) noexcept
        : fd_(std::move(fd)) {}

    struct Packet {
        std::vector<std::uint8_t> bytes;
        std::vector<UniqueFd> fds;
    };

    // EPIPE/ECONNRESET when the other end is gone.
    Result<void> send(std::span<const std::uint8_t> bytes, std::span<const int> fds = {}) const;
    // Waits at most `timeout` (forever without one): ETIMEDOUT, ECONNRESET at end of stream,
    // EPROTO for a truncated packet or too many descriptors (those received are closed).
    Result<Packet> receive(std::optional<std::chrono::milliseconds> timeout) const;

    int fd() const noexcept { return fd_.get(); }
    // Gives up the descriptor (for handing it to a child process).
    UniqueFd release() noexcept { return std::move(fd_); }

    static constexpr std::size_t kMaxFds = 64;

private:
    UniqueFd fd_;
};

} // namespace rpmem::daemon
