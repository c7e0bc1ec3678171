// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "process.h"

namespace rpmem::test {

// How to start rpmemd for a test. The binary comes from the RPMEMD variable meson sets.
struct RpmemdLaunch {
    std::string executable;          // instead of RPMEMD's
    std::filesystem::path config;    // --config
    std::filesystem::path port_file; // made as a FIFO and passed as --port-file
    // The FIFO's owner when rpmemd does not run as the test's user (uid, gid).
    std::optional<std::pair<uid_t, gid_t>> port_file_owner;
    // A command that runs its arguments in the same process (e.g. {"prlimit",
    // "--nofile=1024:1024"}), put before rpmemd's path.
    std::vector<std::string> launcher;
    EnvironmentChanges environment;
    std::optional<std::filesystem::path> log; // stdout and stderr; inherited when not given
    std::chrono::milliseconds patience = std::chrono::seconds(60); // to report its port
};

struct StartedRpmemd {
    Process process;
    std::uint16_t port = 0;
};

// The one way tests start rpmemd: as a child (see Process), listening at the port it writes
// to the FIFO. Waits for that port or for the daemon's death, whichever comes first; throws
// std::runtime_error saying which (with the log when there is one) when it did not come up.
StartedRpmemd start_rpmemd(const RpmemdLaunch& launch);

} // namespace rpmem::test
