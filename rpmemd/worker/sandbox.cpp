// SPDX-License-Identifier: BSD-3-Clause
// Interim: no new privileges and closed descriptors only (the full sandbox lands separately).
#include "rpmemd/worker/sandbox.h"

#include <algorithm>
#include <cerrno>

#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rpmem::daemon {

Result<SandboxReport> enter_sandbox(const SandboxOptions& options) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return fail(Error::from_errno(errno, "PR_SET_NO_NEW_PRIVS"));
    std::vector<int> keep = options.keep_fds;
    std::sort(keep.begin(), keep.end());
    int next = 0;
    for (int fd : keep) {
        if (fd > next)
            ::syscall(SYS_close_range, next, fd - 1, 0);
        next = fd + 1;
    }
    ::syscall(SYS_close_range, next, ~0U, 0);
    SandboxReport report;
    report.landlock_note = "not built in";
    return report;
}

} // namespace rpmem::daemon
