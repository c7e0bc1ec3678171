// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string>

namespace rpmem::bench {

// The file system `path` lies on, as the reports name it: "tmpfs on /dev/shm (rw,size=...)".
// A pool's page size changes what a benchmark measures (a tmpfs mounted huge=always maps 2 MiB
// pages, as persistent memory does; 4 KiB pages cost a fault each on first touch), so a report
// says which it ran on. "unknown" when /proc/self/mounts does not tell.
std::string describe_mount(const std::filesystem::path& path);

} // namespace rpmem::bench
