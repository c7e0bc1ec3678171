// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "base/unique_fd.h"
#include "protocol/replica_state.h"
#include "rpmemd/supervisor/small_file.h"

namespace rpmem::daemon {

// What a promote changed, so that a demote can put it back: the state and generation before,
// the replica links of the headers before (they named the old primary), and the digest of the
// pool's data right after the promote (unchanged: nobody used the promoted pool).
struct PromotionUndo {
    protocol::ReplicaState state = protocol::ReplicaState::consistent;
    std::uint64_t generation = 1;
    PoolAttributes::Uuid prev_replica{};
    PoolAttributes::Uuid next_replica{};
    std::uint64_t data_digest = 0;

    friend bool operator==(const PromotionUndo&, const PromotionUndo&) = default;
};

// What rpmemd knows of one replica: its state and its generation (a counter that starts at 1
// when the pool is created and that only a promotion moves on).
struct ReplicaRecord {
    protocol::ReplicaState state = protocol::ReplicaState::inconsistent;
    std::uint64_t generation = 1;
    // With state inconsistent: the last session was lost while it replicated synchronously (it
    // neither created nor resynced the copy in that session), so the copy holds every persist
    // acknowledged before the loss, like a pool after a crash. Promote accepts it.
    bool lost_in_sync = false;
    // With state promoted: what demote restores.
    std::optional<PromotionUndo> undo;

    friend bool operator==(const ReplicaRecord&, const ReplicaRecord&) = default;
};

// The record as text, and back: `state = NAME` and `generation = N` lines, optionally
// `lost-in-sync = yes` and the `undo-*` lines of a promotion, `#` comments.
// Parse errors name `origin` and the line.
std::string format_replica_record(const ReplicaRecord& record);
Result<ReplicaRecord> parse_replica_record(std::string_view text, std::string_view origin);

// The state file of one pool set: `NAME.rpmem-state` beside the pool set file `NAME`, in the
// same directory (the pool's parts may be device DAX, with no directory of their own). A pool
// set travels with its state file; removing the pool removes it. Writes are crash-safe: a
// temporary file, fsync, rename over the old one, fsync of the directory, so a crash leaves the
// old record or the new one, never a mix. Not thread-safe; the pool's registry hold serialises
// its users.
class ReplicaStateFile {
public:
    // `directory`: the set file's directory (any descriptor, O_PATH will do); `set_leaf`: the
    // set file's name in it; `set_path`: its full path, for messages.
    ReplicaStateFile(UniqueFd directory, std::string_view set_leaf, std::string_view set_path);

    // The record, or nothing when there is no state file (a pool made before state files, or
    // by hand: its history is unknown).
    Result<std::optional<ReplicaRecord>> read() const;
    Result<void> write(const ReplicaRecord& record) const;
    // Unlinks the file; a missing file is no error.
    Result<void> remove() const;

    const std::string& path() const noexcept { return file_.path(); }

private:
    SmallFile file_;
};

} // namespace rpmem::daemon
