// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/page_buffer.h"
#include "fabric/memory_region.h"
#include "fabric/own_queue_endpoint.h"
#include "fabric/stack.h"
#include "fabric/waiter.h"
#include "raw_target.h"

namespace rpmem::bench {

// The round trips `rpmem-bench raw` measures, one per persistence method's data path.
enum class RawOperation {
    apm,    // RMA write + 8-byte RMA read, wait for the read
    gpspm,  // RMA write + 32-byte send, wait for the target's 16-byte reply
    commit, // RMA write with FI_COMMIT_COMPLETE, wait for it
    batch,  // 16 RMA writes + one 8-byte read, wait for the read
};

inline constexpr std::size_t kBatchWrites = 16;

std::string_view to_string(RawOperation operation) noexcept;
std::optional<RawOperation> parse_operation(std::string_view name) noexcept;
// Payload bytes one iteration moves (a batch moves kBatchWrites writes of `size`).
std::size_t payload_bytes(RawOperation operation, std::size_t size) noexcept;

// The client half of `rpmem-bench raw`: N lanes (one endpoint with its own completion queue
// each) connected in parallel to a RawTarget, a source region filled with a pattern, and
// per-lane message and read-bounce buffers. Each lane is driven by one thread at a time.
class RawClient {
public:
    static Result<std::unique_ptr<RawClient>>
    connect(const std::string& provider, const std::string& address, const std::string& service,
            std::size_t lanes, std::size_t region_size, const fabric::RemoteRegion& target);
    ~RawClient();
    RawClient(const RawClient&) = delete;
    RawClient& operator=(const RawClient&) = delete;

    std::size_t lanes() const noexcept { return lanes_.size(); }
    const fabric::Capabilities& capabilities() const noexcept { return stack_->capabilities(); }
    const std::byte* source() const noexcept { return source_.data(); }
    void set_wait_policy(const fabric::WaitPolicy& policy);

    // One iteration of `operation` with writes of `size` bytes on lane `lane`, waited for.
    Result<void> run_once(RawOperation operation, std::size_t lane, std::size_t size);

private:
    struct Lane {
        fabric::OwnQueueEndpoint endpoint;
        std::size_t index;
        int read_tag = 0; // addresses used as operation contexts
        int commit_tag = 0;
        int reply_tag = 0;
    };

    RawClient(std::unique_ptr<fabric::Stack> stack, fabric::RemoteRegion target,
              std::size_t region_size);
    Result<void> open(std::size_t lanes);

    std::unique_ptr<fabric::Stack> stack_;
    fabric::RemoteRegion target_;
    std::size_t region_size_;
    PageBuffer source_;
    std::optional<fabric::MemoryRegion> source_region_;
    PageBuffer messages_;
    std::optional<fabric::MemoryRegion> message_region_;
    std::vector<Lane> lanes_;
};

} // namespace rpmem::bench
