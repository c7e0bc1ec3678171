// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "base/error.h"
#include "rpmemd/boundary/worker_contract.h"

// The sandbox a data-path worker of rpmemd enters once it holds what it needs (its unix socket
// to the supervisor, stderr, libfabric's providers loaded by a first fi_getinfo) and before it
// parses any client input: no privileges, no other file descriptors, read-only access beneath a
// few paths and nothing else of the file system (Landlock), and an allow-list of the system
// calls the data path makes (seccomp). Entering it is irreversible and covers the whole process.
//
// Thread contract: call enter_sandbox while the process has exactly one thread. Landlock, the
// privilege drop and no_new_privs are per thread in the kernel; seccomp alone could be pushed to
// other threads. enter_sandbox refuses (EBUSY) when it finds more than one thread. Threads
// started afterwards inherit every layer.
//
// Sanitizers: ASan and UBSan run inside (their calls are on the allow-list), but
// LeakSanitizer's exit-time check cannot: it stops the world with a non-thread clone and
// ptrace, both refused, and then fails the exit status with "LeakSanitizer has encountered a
// fatal error". A sandboxed process in a sanitizer build ends with _exit() or runs with
// ASAN_OPTIONS=detect_leaks=0.
namespace rpmem::daemon {

struct SandboxOptions {
    // When the process runs as root: switch to this user and group (supplementary groups become
    // just `gid`). Both or neither: a user without a group would keep group root. When not root,
    // a uid/gid equal to the current one is accepted, a different one is EPERM.
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    // Descriptors that stay open; every other one is closed. 0, 1 and 2 are never left closed:
    // one of them not listed here is pointed at /dev/null instead, so no socket or pool file the
    // worker opens later can take its number and receive stray output.
    std::vector<int> keep_fds;
    // Landlock: reading files and listing directories beneath these is allowed; nothing else of
    // the file system is (no writes, truncation, execution, device ioctls, making or removing
    // entries). Empty: no file system access at all.
    std::vector<std::string> read_only_paths;
    // The seccomp allow-list of sandbox.cpp; off only for diagnosing a worker.
    bool filter_system_calls = true;
    // The filter refuses shared mappings of a file below kHeaderGuard, where a pool part keeps
    // its header, so that a worker driven by an exploit cannot map a header writable (it can
    // neither write(2) one: see enter_sandbox). Set only for a worker that serves pool sets
    // whose later parts have no header (SINGLEHDR, NOHDRS): those map from offset 0, which the
    // filter cannot tell from part 0's header.
    bool map_part_starts = false;
};

// What enter_sandbox could apply, for the caller to log once.
struct SandboxReport {
    int landlock_abi = 0;      // 0: the kernel has no Landlock (see landlock_note)
    std::string landlock_note; // "unavailable: ..." when landlock_abi is 0, else empty
    bool seccomp = false;
    bool dropped_privileges = false;   // uid/gid were switched away from root
    bool emptied_bounding_set = false; // (as root) no capability is left in the bounding set
};

// Applies, in this order: no_new_privs, not dumpable, an empty capability bounding set (as root)
// and no ambient capabilities, the privilege drop, no writes to regular
// files (RLIMIT_FSIZE 0, hard: write(2) on a pool part or any other file fails with EFBIG; the
// data path writes pools through their mappings only), closing descriptors, Landlock, seccomp. A
// kernel without Landlock is not an error (see the report); every other failure is, and leaves the
// process in an unknown state: the caller must exit.
Result<SandboxReport> enter_sandbox(const SandboxOptions& options);

} // namespace rpmem::daemon
