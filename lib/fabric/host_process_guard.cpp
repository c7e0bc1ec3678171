// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/host_process_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rpmem::fabric {

namespace {

// glibc adds the kernel's SA_RESTORER (its return trampoline) to every disposition it installs,
// so a disposition put back reads with it even where the original, never installed, had none.
constexpr int kRestorerFlag = 0x04000000;

bool same_disposition(const struct sigaction& a, const struct sigaction& b) noexcept {
    // sa_handler and sa_sigaction share storage; the flags say which one is meant.
    return a.sa_sigaction == b.sa_sigaction &&
           (a.sa_flags & ~kRestorerFlag) == (b.sa_flags & ~kRestorerFlag);
}

bool same_directory(int fd) noexcept {
    struct stat saved {};
    struct stat current {};
    if (fstat(fd, &saved) != 0 || stat(".", &current) != 0)
        return true; // nothing to compare against; leave the directory alone
    return saved.st_dev == current.st_dev && saved.st_ino == current.st_ino;
}

} // namespace

HostProcessGuard::HostProcessGuard() {
    saved_.reserve(NSIG);
    for (int signal = 1; signal < NSIG; ++signal) {
        Saved entry{signal, {}};
        // glibc refuses its own real-time signals and nothing can be installed for SIGKILL
        // or SIGSTOP; those are simply not remembered.
        if (signal != SIGKILL && signal != SIGSTOP &&
            sigaction(signal, nullptr, &entry.action) == 0)
            saved_.push_back(entry);
    }
    directory_fd_ = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

HostProcessGuard::~HostProcessGuard() {
    if (directory_fd_ >= 0)
        close(directory_fd_);
}

sigset_t HostProcessGuard::restore() noexcept {
    sigset_t restored;
    sigemptyset(&restored);
    for (const Saved& entry : saved_) {
        struct sigaction current {};
        if (sigaction(entry.signal, nullptr, &current) != 0 ||
            same_disposition(current, entry.action))
            continue;
        if (sigaction(entry.signal, &entry.action, nullptr) == 0)
            sigaddset(&restored, entry.signal);
    }
    if (directory_fd_ >= 0 && !same_directory(directory_fd_))
        (void)fchdir(directory_fd_);
    return restored;
}

} // namespace rpmem::fabric
