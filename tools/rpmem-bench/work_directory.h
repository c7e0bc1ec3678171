// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>

#include "base/error.h"

namespace rpmem::bench {

// A benchmark's scratch directory, `PARENT/rpmem-bench.XXXXXX` (pool files, rpmemd's config and
// logs), removed with everything in it when the object goes: always, or, with
// Cleanup::after_success, only once succeeded() was called, so that after a failure its logs
// say why. Move-only; owned by the benchmark that made it, one thread.
class WorkDirectory {
public:
    enum class Cleanup { always, after_success };

    static Result<WorkDirectory> make(const std::filesystem::path& parent, Cleanup cleanup);
    ~WorkDirectory();
    WorkDirectory(WorkDirectory&& other) noexcept;
    WorkDirectory& operator=(WorkDirectory&&) = delete;
    WorkDirectory(const WorkDirectory&) = delete;
    WorkDirectory& operator=(const WorkDirectory&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }
    void succeeded() noexcept { succeeded_ = true; }

private:
    WorkDirectory(std::filesystem::path path, Cleanup cleanup)
        : path_(std::move(path))
        , cleanup_(cleanup) {}

    std::filesystem::path path_; // empty once moved from
    Cleanup cleanup_;
    bool succeeded_ = false;
};

} // namespace rpmem::bench
