// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include "base/error.h"
#include "base/unique_fd.h"

namespace rpmem::daemon {

// The executable workers are started from: rpmemd's own image, opened once at start and
// held (an O_PATH descriptor), so that workers come from the very file the supervisor runs.
// Neither a directory its user cannot traverse (the path is never walked again) nor a package
// upgrade that replaces the file under a running daemon changes what a worker runs.
class WorkerImage {
public:
    // The running executable (/proc/self/exe).
    static Result<WorkerImage> open_running();
    // Another executable (tests), or the running one under the name `shown`.
    static Result<WorkerImage> open(const std::string& path, std::string shown = {});

    // A path that names the held file from the process that holds it, also in a child
    // between fork and exec: /proc/self/fd/N. N is above the descriptors a worker is given.
    std::string exec_path() const;
    // Where the file was when it was opened, for messages and the worker's argv[0].
    const std::string& display_path() const noexcept { return display_path_; }
    int fd() const noexcept { return fd_.get(); }

private:
    WorkerImage(UniqueFd fd, std::string display_path)
        : fd_(std::move(fd))
        , display_path_(std::move(display_path)) {}

    UniqueFd fd_;
    std::string display_path_;
};

} // namespace rpmem::daemon
