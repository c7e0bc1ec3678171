// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/page_buffer.h"
#include "fabric/completion_queue.h"
#include "fabric/memory_region.h"
#include "fabric/passive_endpoint.h"
#include "fabric/shared_queue_endpoint.h"
#include "fabric/stack.h"
#include "fabric/waiter.h"

namespace rpmem::bench {

// The message sizes of the write + send + reply round trip (GPSPM's shape: a small request
// naming the range, a smaller reply).
inline constexpr std::size_t kRequestSize = 32;
inline constexpr std::size_t kReplySize = 16;

struct RawTargetConfig {
    std::string provider;
    std::string address = "127.0.0.1";
    std::size_t region_size = 0;
    std::size_t max_lanes = 1;
    int cpu = -1; // pin the responder thread here, -1 for no pinning
};

// The target half of `rpmem-bench raw`: listens on address:0, accepts every lane, and serves
// them all from one thread and one shared completion queue, as a daemon's responder would:
// polling keeps tcp's RMA moving, each request message is answered with a reply, nothing is
// flushed (this measures the fabric, not the storage). The region it exposes is plain heap
// memory registered for remote reads and writes. Owns its thread; start() and the destructor
// are called from the owner's thread, the getters from any.
class RawTarget {
public:
    static Result<std::unique_ptr<RawTarget>> start(const RawTargetConfig& config);
    ~RawTarget();
    RawTarget(const RawTarget&) = delete;
    RawTarget& operator=(const RawTarget&) = delete;

    std::string service() const { return std::to_string(listener_->port()); }
    fabric::RemoteRegion region() const { return region_->remote(); }
    const std::byte* memory() const { return memory_.data(); }
    // How the responder waits from its next wait on.
    void set_spin(std::chrono::nanoseconds spin) { spin_ns_ = spin.count(); }
    std::optional<Error> failure() const;

private:
    struct Lane {
        fabric::SharedQueueEndpoint endpoint;
        std::size_t index;
        bool reply_tag = false; // its address is the context of the lane's replies
    };

    RawTarget(RawTargetConfig config, std::unique_ptr<fabric::Stack> stack);
    Result<void> open_resources();
    void run();
    void accept_requests();
    void answer(Lane& lane);
    void record(const Error& error);

    RawTargetConfig config_;
    // Parents before children.
    std::unique_ptr<fabric::Stack> stack_;
    std::unique_ptr<fabric::CompletionQueue> completions_;
    PageBuffer memory_;
    std::optional<fabric::MemoryRegion> region_;
    PageBuffer messages_; // per lane: request buffer, then reply buffer
    std::optional<fabric::MemoryRegion> message_region_;
    std::optional<fabric::PassiveEndpoint> listener_;
    std::vector<std::unique_ptr<Lane>> lanes_;

    std::atomic<bool> stop_{false};
    std::atomic<std::int64_t> spin_ns_{0};
    mutable std::mutex failure_mutex_;
    std::optional<Error> failure_;
    std::thread thread_;
};

} // namespace rpmem::bench
