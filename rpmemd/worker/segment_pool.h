// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/error.h"
#include "base/unique_fd.h"
#include "persist/request_handler.h"
#include "poolset/mapped_range.h"
#include "protocol/worker_message.h"

namespace rpmem::daemon {

// A session's pool as a worker maps it: the part descriptors the supervisor passed, mapped
// MAP_SHARED into one reserved range at the offsets the supervisor's own mapping has, except
// the first `data_offset` bytes (the pool header), which stay an inaccessible reservation: no
// code of the worker, and no RMA however its bounds are forged, can write the header. Owns the
// mapping; the descriptors are closed once mapped. persist() flushes (pmem_persist) or msyncs as
// the supervisor found the pool to be. Immutable after creation, so thread-safe.
class SegmentPool final : public persist::TargetPool {
public:
    static Result<std::unique_ptr<SegmentPool>> map(const protocol::WorkerStart& start,
                                                    std::vector<UniqueFd> fds);

    std::span<std::byte> bytes() const noexcept override {
        return {reinterpret_cast<std::byte*>(range_.data()), range_.size()};
    }
    Result<void> persist(std::uint64_t offset, std::uint64_t length) const override;
    Result<void> deep_persist(std::uint64_t offset, std::uint64_t length) const override;

private:
    SegmentPool() = default;

    poolset::MappedRange range_;
    std::uint64_t data_offset_ = 0;
    bool is_pmem_ = false;
};

} // namespace rpmem::daemon
