// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/error.h"

namespace rpmem::daemon {

struct SandboxOptions {
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    std::vector<int> keep_fds;
    std::vector<std::string> read_only_paths;
    bool filter_system_calls = true;
};

struct SandboxReport {
    int landlock_abi = 0;
    std::string landlock_note;
    bool seccomp = false;
    bool dropped_privileges = false;
};

Result<SandboxReport> enter_sandbox(const SandboxOptions& options);

} // namespace rpmem::daemon
