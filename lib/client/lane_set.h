// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/page_buffer.h"
#include "client/settings.h"
#include "fabric/memory_region.h"
#include "fabric/stack.h"
#include "persist/initiator_lane.h"
#include "protocol/reply.h"

namespace rpmem::client {

// The fabric side of a replica: its fabric::Stack, the local pool
// registered as the source of writes, the lanes' message buffers, and the lanes themselves,
// connected in parallel to the target's listener with the session's token. Made from the
// DataPath of a create or open reply. Members are declared parent before child, so the lanes
// close before the regions and the stack they use. Lanes are used by their callers
// (one thread per lane); connect() and destruction by one thread.
class LaneSet {
public:
    // `control_host` is dialled when the reply names no fabric host (the target listens on a
    // wildcard address); `abort`, when set, makes waiting lanes give up with ECONNRESET.
    static Result<std::unique_ptr<LaneSet>> connect(const protocol::DataPath& data_path,
                                                    std::string_view control_host,
                                                    std::span<std::byte> pool,
                                                    const Settings& settings, unsigned lanes,
                                                    const std::atomic<bool>* abort);

    ~LaneSet();
    LaneSet(const LaneSet&) = delete;
    LaneSet& operator=(const LaneSet&) = delete;

    unsigned size() const noexcept { return static_cast<unsigned>(lanes_.size()); }
    persist::InitiatorLane& lane(unsigned index) noexcept { return *lanes_[index]; }

private:
    LaneSet() = default;
    Result<void> open(const protocol::DataPath& data_path, std::string_view control_host,
                      std::span<std::byte> pool, const Settings& settings, unsigned lanes,
                      const std::atomic<bool>* abort);

    std::unique_ptr<fabric::Stack> stack_;
    std::optional<fabric::MemoryRegion> pool_region_;
    PageBuffer buffers_;
    std::optional<fabric::MemoryRegion> buffer_region_;
    std::vector<std::unique_ptr<persist::InitiatorLane>> lanes_;
};

} // namespace rpmem::client
