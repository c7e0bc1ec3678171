// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fabric/completion_queue.h"
#include "fabric/domain.h"
#include "fabric/event_queue.h"
#include "fabric/fabric.h"
#include "fabric/memory_region.h"
#include "fabric/own_queue_endpoint.h"
#include "fabric/passive_endpoint.h"
#include "fabric/provider.h"
#include "fabric/shared_queue_endpoint.h"

// Test support for the fabric integration tests: a target thread that listens on 127.0.0.1
// port 0, accepts or rejects by private data, and serves its endpoints from one shared
// completion queue (the responder design rpmemd uses), plus the client side's fabric objects.
namespace rpmem::fabric::test {

// The value of a Result, or an exception Catch2 reports with the error's message.
template <typename T>
T must(Result<T>&& result) {
    if (!result)
        throw std::runtime_error(result.error().message());
    return std::move(*result);
}
inline void must(Result<void>&& result) {
    if (!result)
        throw std::runtime_error(result.error().message());
}

// A pattern that differs by seed, for the bytes a test sends or writes.
inline void fill(std::byte* data, std::size_t length, unsigned seed) {
    for (std::size_t i = 0; i < length; ++i)
        data[i] = std::byte(static_cast<unsigned char>(seed + i * 7));
}

inline std::span<const std::byte> bytes_of(std::string_view text) {
    return std::as_bytes(std::span(text.data(), text.size()));
}

// Page-aligned zeroed memory for registration.
class AlignedBuffer {
public:
    explicit AlignedBuffer(std::size_t size);
    ~AlignedBuffer();
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    std::byte* data_;
    std::size_t size_;
};

// One end's fabric objects, parents first.
struct Side {
    Provider provider;
    Fabric fabric;
    Domain domain;
    std::unique_ptr<EventQueue> events;

    static Side open(const ProviderRequest& request);
};

// Messages are kMessageSize bytes; the target answers each with the same bytes plus one.
inline constexpr std::size_t kMessageSize = 64;

struct TargetOptions {
    std::string provider;
    std::size_t region_size = std::size_t{1} << 20;
    std::size_t max_connections = 64;
    // Decides on a connection request by its private data.
    std::function<bool(std::span<const std::byte>)> accept = [](std::span<const std::byte>) {
        return true;
    };
};

class LoopbackTarget {
public:
    explicit LoopbackTarget(TargetOptions options);
    ~LoopbackTarget();
    LoopbackTarget(const LoopbackTarget&) = delete;
    LoopbackTarget& operator=(const LoopbackTarget&) = delete;

    std::string service() const { return std::to_string(listener_->port()); }
    RemoteRegion region() const { return region_->remote(); }
    std::byte* memory() const { return memory_.data(); }
    std::size_t accepted() const { return accepted_.load(); }
    std::size_t rejected() const { return rejected_.load(); }
    std::size_t broken() const { return broken_.load(); }
    // The first unexpected error the target thread met, empty if none.
    std::string failure() const;

private:
    struct Lane {
        SharedQueueEndpoint endpoint;
        std::size_t index;
        bool receive_tag = false; // addresses used as operation contexts
        bool reply_tag = false;
    };

    void run();
    void serve_requests();
    void answer(Lane& lane);
    void record(const Error& error);

    TargetOptions options_;
    Side side_;
    std::unique_ptr<CompletionQueue> completions_;
    AlignedBuffer memory_;
    std::optional<MemoryRegion> region_;
    AlignedBuffer messages_; // per lane: receive buffer, then reply buffer
    std::optional<MemoryRegion> message_region_;
    std::optional<PassiveEndpoint> listener_;
    std::vector<std::unique_ptr<Lane>> lanes_;

    std::atomic<bool> stop_{false};
    std::atomic<std::size_t> accepted_{0};
    std::atomic<std::size_t> rejected_{0};
    std::atomic<std::size_t> broken_{0};
    mutable std::mutex failure_mutex_;
    std::string failure_;
    std::thread thread_;
};

// The client side: fabric objects, a source/destination buffer registered for RMA and
// messages, and lanes connected to a target.
class LoopbackClient {
public:
    LoopbackClient(const std::string& provider, const std::string& service,
                   std::size_t buffer_size = std::size_t{1} << 20);

    // Creates an endpoint with its own CQ and posts its connect (parallel connects: call this
    // for each, then wait_connected on each).
    OwnQueueEndpoint start_lane(std::span<const std::byte> private_data,
                                EndpointOptions options = {});
    OwnQueueEndpoint connect_lane(std::span<const std::byte> private_data,
                                  EndpointOptions options = {});

    Side& side() { return side_; }
    const Capabilities& capabilities() const { return side_.provider.capabilities; }
    MemoryRegion& region() { return *region_; }
    std::byte* buffer() const { return buffer_.data(); }

private:
    Side side_;
    AlignedBuffer buffer_;
    std::optional<MemoryRegion> region_;
};

// Three rounds of a message sent from `client`'s buffer at `offset`, its reply received right
// behind it: every reply must be a whole message of the sent bytes plus one.
void exchange_messages(LoopbackClient& client, OwnQueueEndpoint& lane, std::size_t offset);

} // namespace rpmem::fabric::test
