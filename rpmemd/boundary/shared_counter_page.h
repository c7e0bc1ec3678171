// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>

#include "base/error.h"
#include "base/unique_fd.h"
#include "poolset/mapped_range.h"
#include "protocol/data_path_counters.h"

namespace rpmem::daemon {

// One session's DataPathCounterPage in a memfd (its second page): the supervisor creates it and
// passes the descriptor to the session's worker, which maps it too and counts there; the supervisor
// reads it for status and /metrics, also after the worker has gone. Owns the descriptor and the
// mapping.
class SharedCounterPage {
public:
    // A fresh, zeroed page (the supervisor's side).
    static Result<std::shared_ptr<SharedCounterPage>> create();
    // The page behind a descriptor the supervisor passed (the worker's side).
    static Result<std::shared_ptr<SharedCounterPage>> attach(UniqueFd fd);

    SharedCounterPage(const SharedCounterPage&) = delete;
    SharedCounterPage& operator=(const SharedCounterPage&) = delete;

    int fd() const noexcept { return fd_.get(); }
    protocol::DataPathCounterPage& page() const noexcept {
        return *reinterpret_cast<protocol::DataPathCounterPage*>(mapping_.data());
    }
    protocol::DataPathCounters read() const noexcept { return page().read(); }

private:
    SharedCounterPage(UniqueFd fd, poolset::MappedRange mapping) noexcept
        : fd_(std::move(fd))
        , mapping_(std::move(mapping)) {}
    static Result<std::shared_ptr<SharedCounterPage>> map(UniqueFd fd);

    UniqueFd fd_;
    poolset::MappedRange mapping_;
};

} // namespace rpmem::daemon
