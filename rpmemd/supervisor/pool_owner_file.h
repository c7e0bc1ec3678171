// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/unique_fd.h"
#include "rpmemd/supervisor/small_file.h"

namespace rpmem::daemon {

// The owner record as text, and back: an `owner = HEX` line (the identity's bytes in hex, so
// that any certificate name survives the line format) and `#` comments. Parse errors name
// `origin` and the line.
std::string format_pool_owner(std::string_view identity);
Result<std::string> parse_pool_owner(std::string_view text, std::string_view origin);

// The owner file of one pool set: `NAME.rpmem-owner` beside the pool set file `NAME`, naming
// the client identity that created the pool (PoolStore's tenancy rule: each identity sees only
// the pool sets it created). Written when a pool is created (or adopted), removed with the
// pool, replaced crash-safely (small_file.h). Not thread-safe; the pool's registry hold
// serialises its writers, and a reader sees the old file or the new one.
class PoolOwnerFile {
public:
    // As ReplicaStateFile: the set file's directory, its name in it, and its full path.
    PoolOwnerFile(UniqueFd directory, std::string_view set_leaf, std::string_view set_path);

    // The owner, or nothing when the set has no owner file (never created by this rpmemd, or
    // made before owners were recorded).
    Result<std::optional<std::string>> read() const;
    Result<void> write(std::string_view identity) const;
    // Unlinks the file; a missing file is no error.
    Result<void> remove() const;

    const std::string& path() const noexcept { return file_.path(); }

private:
    SmallFile file_;
};

} // namespace rpmem::daemon
