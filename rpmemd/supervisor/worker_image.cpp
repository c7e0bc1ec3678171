// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/worker_image.h"

#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

#include "rpmemd/boundary/worker_contract.h"

namespace rpmem::daemon {

namespace {

// The child's file actions put the worker socket on kWorkerSocketFd and the log pipe on
// stdout/stderr before exec: the image must not sit on any of them, or exec would find the
// socket where the image was.
constexpr int kLowestImageFd = kWorkerSocketFd + 1;

} // namespace

Result<WorkerImage> WorkerImage::open_running() {
    std::error_code error;
    std::string shown = std::filesystem::read_symlink("/proc/self/exe", error).string();
    if (error)
        shown = "rpmemd";
    return open("/proc/self/exe", shown);
}

Result<WorkerImage> WorkerImage::open(const std::string& path, std::string shown) {
    if (shown.empty())
        shown = path;
    const std::string what = path == shown ? path : path + " (" + shown + ")";
    UniqueFd opened(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!opened.valid())
        return fail(Error::from_errno(errno, "opening " + what + " to start workers from"));
    UniqueFd placed(::fcntl(opened.get(), F_DUPFD_CLOEXEC, kLowestImageFd));
    if (!placed.valid())
        return fail(Error::from_errno(errno, "holding " + what + " to start workers from"));
    return WorkerImage(std::move(placed), std::move(shown));
}

std::string WorkerImage::exec_path() const {
    return "/proc/self/fd/" + std::to_string(fd_.get());
}

} // namespace rpmem::daemon
