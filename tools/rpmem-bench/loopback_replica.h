// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/error.h"
#include "client/replica.h"
#include "client/settings.h"
#include "poolset/pool_mapping.h"
#include "result_report.h"
#include "rpmemd_process.h"
#include "work_directory.h"

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

// A client::Replica of a local pool file, served by a private rpmemd on loopback, with the work
// directory that holds both sides' files: removed once the benchmark succeeded, else kept.
class LoopbackReplica {
public:
    struct Options {
        std::filesystem::path pool_dir; // the work directory goes there
        std::filesystem::path rpmemd;
        std::size_t pool_size = 0;
        std::string provider = "tcp";
        std::string set_name; // the target's pool set
        unsigned lanes = 1;   // asked for; lanes() is what was granted
        client::FailurePolicy on_failure = client::FailurePolicy::error;
    };

    // Makes the work directory under options.pool_dir; nothing else yet.
    static Result<std::unique_ptr<LoopbackReplica>> make(const Options& options);
    // Maps the local pool, starts rpmemd, writes its pool set and opens the replica on it; the
    // daemon and both pool files are named in `report`'s context. After a failure the files
    // stay in directory().
    Result<void> open(Report& report);

    std::span<std::byte> pool() const noexcept { return pool_; }
    const std::filesystem::path& directory() const noexcept { return work_.path(); }
    std::filesystem::path target_part() const { return directory() / "target.part0"; }
    RpmemdProcess& rpmemd() noexcept { return *rpmemd_; }
    client::Replica& replica() noexcept { return *replica_; }
    unsigned lanes() const noexcept { return lanes_; }

    // Closes the replica; when that worked the work directory goes with this object.
    Result<void> close();

private:
    LoopbackReplica(const Options& options, WorkDirectory work)
        : options_(options)
        , work_(std::move(work)) {}

    Options options_;
    WorkDirectory work_; // first: removed after everything in it closed
    std::optional<poolset::PoolMapping> local_;
    std::span<std::byte> pool_;
    std::unique_ptr<RpmemdProcess> rpmemd_;
    std::unique_ptr<client::Replica> replica_; // after rpmemd_: closes first
    unsigned lanes_ = 0;
};

} // namespace rpmem::bench
