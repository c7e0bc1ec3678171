// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <sys/types.h>

namespace rpmem::daemon {

// How long a connection to a session's data port may go without presenting its lane binding
// (the session token): a real client sends it with the connection (within milliseconds).
inline constexpr std::chrono::milliseconds kLaneBindingDeadline{2000};

// The doorkeeper of one process's data ports (one per ResponderPool, so one per worker): the
// connections a fabric provider accepted on a session's listener but that never became lanes.
// A provider reports a connection only once its connection request arrives, and libfabric
// 1.17's tcp provider holds every other one for good (fabric/port_sockets.h); so the gate looks
// at the process's sockets itself, once per `interval` while a port is open, and shuts down
// each connection to an open port that is not one of the port's admitted lanes and has been
// there longer than `deadline`. The provider then sees the end of the stream and frees it.
// The gate sweeps on a thread of its own (started with the first port): a sweep lists every
// descriptor of the process, about 24 ms with 256 sessions here, and on a responder thread
// every request that came meanwhile waited for it. Thread-safe.
class LaneGate {
public:
    using Clock = std::chrono::steady_clock;

    explicit LaneGate(std::chrono::milliseconds deadline = kLaneBindingDeadline,
                      std::chrono::milliseconds interval = std::chrono::milliseconds(500));
    ~LaneGate(); // stops the gate's thread
    LaneGate(const LaneGate&) = delete;
    LaneGate& operator=(const LaneGate&) = delete;

    // A session's listener on `port` (named `name` in logs) is open, with `lanes` lanes.
    void open_port(std::uint16_t port, std::string name, unsigned lanes);
    // It closes: the gate forgets it.
    void close_port(std::uint16_t port);
    // Lane `lane` of `port` was admitted from `peer`: its connection is the lane's.
    void admit(std::uint16_t port, unsigned lane, const void* peer, std::size_t length);
    // Does the sweep when `interval` has passed since the last one; returns how many
    // connections it shut down. The gate's thread calls it; so may a test.
    std::size_t sweep(Clock::time_point now);

private:
    struct Port {
        std::string name;
        std::vector<sockaddr_storage> lanes; // the admitted lanes' peers (zeroed: none)
        std::map<ino_t, Clock::time_point> first_seen;
    };

    const std::chrono::milliseconds deadline_;
    const std::chrono::milliseconds interval_;
    void run();

    mutable std::mutex mutex_; // guards ports_, next_sweep_ and stop_
    std::map<std::uint16_t, Port> ports_;
    Clock::time_point next_sweep_{};
    std::condition_variable wake_; // stop_ was set
    bool stop_ = false;
    std::thread thread_; // started by the first open_port
};

} // namespace rpmem::daemon
