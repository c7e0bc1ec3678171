// SPDX-License-Identifier: BSD-3-Clause
#include "precondition.h"

#include <cerrno>
#include <cstring>

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "process.h"
#include "temp_dir.h"

namespace rpmem::test {

std::optional<std::string> missing_root() {
    if (::geteuid() != 0)
        return "needs root (runs as uid " + std::to_string(::geteuid()) + ")";
    return std::nullopt;
}

std::optional<std::string> missing_mount_namespace() {
    TempDir dir("rpmem-mount-probe");
    const std::string target = dir.path().string();
    // In a child: the namespace and the mount go with it.
    const ChildOutcome probe = run_in_child([&target](int) -> std::string {
        if (::unshare(CLONE_NEWNS) != 0)
            return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
        if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            return std::string("making / private: ") + std::strerror(errno);
        if (::mount("tmpfs", target.c_str(), "tmpfs", 0, "size=1m") != 0)
            return std::string("mounting a tmpfs: ") + std::strerror(errno);
        return "";
    });
    if (probe.status != 0)
        return "needs a mount namespace with a tmpfs in it: " + probe.message;
    return std::nullopt;
}

} // namespace rpmem::test
