// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/error.h"

namespace rpmem::bench {

// The text files a benchmark writes into its scratch directory (work_directory.h).

// A pool set of one part of `size` bytes at `part`, with a REPLICA line for each of
// `replicas` ("user@host:port set" or PMDK's "host set").
std::string pool_set_text(std::size_t size, const std::filesystem::path& part,
                          const std::vector<std::string>& replicas);

// Writes `text` to `path` (replacing it) with `mode`; EIO or the chmod's errno naming the file.
Result<void> write_text(const std::filesystem::path& path, const std::string& text,
                        mode_t mode = 0644);

} // namespace rpmem::bench
