// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include "base/error.h"
#include "poolset/pool_set.h"

namespace rpmem::tools {

// The text of the pool set file at `path`; refuses files over 1 MiB (no pool set is that long).
Result<std::string> read_set_file(const std::string& path);

// The pool set file at `path`, read and parsed (poolset::parse: errors name the file and line).
Result<poolset::PoolSet> load_set_file(const std::string& path);

} // namespace rpmem::tools
