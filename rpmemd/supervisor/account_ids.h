// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string_view>

#include <sys/types.h>

#include "base/error.h"

namespace rpmem::daemon {

// rpmemd's config keys `user` and `group`: a name from the system's databases (NSS) or a
// decimal id. The supervisor resolves them before it starts workers, which get the numbers.
Result<uid_t> resolve_user(std::string_view name);
Result<gid_t> resolve_group(std::string_view name);

} // namespace rpmem::daemon
