// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/worker/lane_gate.h"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "fabric/port_sockets.h"

namespace rpmem::daemon {

LaneGate::LaneGate(std::chrono::milliseconds deadline, std::chrono::milliseconds interval)
    : deadline_(deadline)
    , interval_(interval) {}

LaneGate::~LaneGate() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

void LaneGate::run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval_, [&] { return stop_; })) {
        lock.unlock();
        (void)sweep(Clock::now());
        lock.lock();
    }
}

void LaneGate::open_port(std::uint16_t port, std::string name, unsigned lanes) {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable() && !stop_)
        thread_ = std::thread([this] { run(); });
    Port& state = ports_[port];
    state.name = std::move(name);
    state.lanes.assign(lanes, sockaddr_storage{});
    state.first_seen.clear();
}

void LaneGate::close_port(std::uint16_t port) {
    std::lock_guard lock(mutex_);
    ports_.erase(port);
}

void LaneGate::admit(std::uint16_t port, unsigned lane, const void* peer, std::size_t length) {
    std::lock_guard lock(mutex_);
    auto found = ports_.find(port);
    if (found == ports_.end() || lane >= found->second.lanes.size() || peer == nullptr)
        return;
    sockaddr_storage& slot = found->second.lanes[lane];
    slot = sockaddr_storage{};
    std::memcpy(&slot, peer, std::min(length, sizeof slot));
}

std::size_t LaneGate::sweep(Clock::time_point now) {
    std::unique_lock lock(mutex_);
    if (now < next_sweep_ || ports_.empty())
        return 0;
    next_sweep_ = now + interval_;
    // The listing is the cost, so it goes without the lock: lanes are admitted meanwhile, and
    // the matching below sees every lane admitted by then. (A shut_down checks the inode: a
    // descriptor closed and reused since the listing is left alone.)
    lock.unlock();
    auto sockets = fabric::tcp_sockets();
    lock.lock();
    if (!sockets) {
        spdlog::debug("looking for connections without a lane binding: {}",
                      sockets.error().message());
        return 0;
    }
    std::map<std::uint16_t, std::map<ino_t, Clock::time_point>> still_there;
    std::map<std::uint16_t, std::size_t> closed;
    std::size_t total = 0;
    for (const fabric::PortSocket& socket : *sockets) {
        if (socket.listening)
            continue;
        auto found = ports_.find(socket.local_port);
        if (found == ports_.end())
            continue;
        Port& port = found->second;
        const bool lane = std::any_of(port.lanes.begin(), port.lanes.end(), [&](const auto& peer) {
            return fabric::is_peer(socket, &peer, sizeof peer);
        });
        if (lane)
            continue;
        auto seen = port.first_seen.try_emplace(socket.inode, now).first->second;
        if (now - seen >= deadline_ && fabric::shut_down(socket)) {
            ++closed[socket.local_port];
            ++total;
        } else {
            still_there[socket.local_port][socket.inode] = seen;
        }
    }
    // What the gate costs the worker's CPU.
    spdlog::debug(
        "lane gate: looked at {} sockets of {} data ports in {} us", sockets->size(), ports_.size(),
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - now).count());
    for (auto& [number, port] : ports_) {
        port.first_seen = std::move(still_there[number]);
        if (auto count = closed.find(number); count != closed.end())
            spdlog::warn("{}: closed {} connection(s) to its data port that presented no lane "
                         "binding within {} ms",
                         port.name, count->second, deadline_.count());
    }
    return total;
}

} // namespace rpmem::daemon
