// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "base/error.h"
#include "client/settings.h"
#include "poolset/pool_mapping.h"
#include "result_report.h"
#include "rpmemd_process.h"

namespace rpmem::bench {

// The pieces the benchmarks of one client::Replica against a private rpmemd on loopback
// (resync, digest) set up from.

// The initiator's pool: the part file `part` of `size` bytes, created and mapped as libpmemobj
// would map it.
Result<poolset::PoolMapping> map_initiator_pool(const std::filesystem::path& part,
                                                std::size_t size);

// Starts the daemon `binary` with its files in `directory` and names it in `report`'s context.
Result<std::unique_ptr<RpmemdProcess>> start_rpmemd(const std::filesystem::path& binary,
                                                    const std::filesystem::path& directory,
                                                    Report& report);

// Writes the pool set `name` into rpmemd's pool set directory: one part `part` of `size` bytes,
// without pool headers (the target's data is the initiator's from offset 0).
Result<void> write_target_set(const RpmemdProcess& rpmemd, const std::string& name,
                              std::size_t size, const std::filesystem::path& part);

// A client of `rpmemd`: its credentials, `provider`, librpmem's log in `log_file` at info.
client::Settings loopback_settings(const RpmemdProcess& rpmemd, const std::string& provider,
                                   const std::filesystem::path& log_file);

} // namespace rpmem::bench
