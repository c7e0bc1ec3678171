// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <csignal>
#include <vector>

namespace rpmem::fabric {

// Keeps what a foreign library may change while it loads from leaking into the host process:
// every signal disposition and the working directory. Made before the load, it remembers both;
// restore() puts back each disposition that differs from the remembered one and returns to the
// remembered directory if it changed. Debian's libfabric pulls in libinfinipath, whose load-time
// constructor replaces SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT and SIGTERM with a handler that
// writes a "*,vm.btr" file into the working directory and exits with status 1.
// Not thread-safe in the sense that a disposition the application changes on another thread
// between construction and restore() is reverted too; callers hold it only around a load.
class HostProcessGuard {
public:
    HostProcessGuard();
    ~HostProcessGuard();
    HostProcessGuard(const HostProcessGuard&) = delete;
    HostProcessGuard& operator=(const HostProcessGuard&) = delete;

    // The signals whose disposition was put back (empty when nothing had changed).
    sigset_t restore() noexcept;

private:
    struct Saved {
        int signal;
        struct sigaction action;
    };
    std::vector<Saved> saved_;
    int directory_fd_ = -1; // the working directory as it was; -1 if it could not be opened
};

} // namespace rpmem::fabric
