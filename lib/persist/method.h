// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <optional>
#include <string_view>

namespace rpmem::persist {

// How a relaxed persist, a flush and a drain reach durability on the target (DESIGN.md,
// "Persistence methods"). Strict (non-relaxed) persists always carry their data in a message
// that the target copies with 8-byte stores, whatever the method.
enum class Method {
    apm,    // fi_write + 8-byte fi_read: NIC writes bypass the target's caches (or eADR)
    gpspm,  // fi_write + message: the target's CPU flushes the range, then replies
    commit, // fi_writemsg(FI_COMMIT_COMPLETE) into an FI_RMA_PMEM region
};

std::string_view to_string(Method method) noexcept;

// Accepts the names to_string() gives ("apm", "gpspm", "commit").
std::optional<Method> parse_method(std::string_view name) noexcept;

} // namespace rpmem::persist
