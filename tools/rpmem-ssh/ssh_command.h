// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/target.h"

namespace rpmem::tools {

// What libpmempool asks of `$RPMEM_SSH` during `pmempool sync` and `pmempool rm`:
//   $RPMEM_SSH [-p PORT] -T [-4] -oBatchMode=yes [user@]host "rpmemd --remove SET [--force]
//   [--pool-set]"
// (the remote command arrives as one argument, or as several that are joined with spaces).
struct RemoveCall {
    Target target;
    std::string pool_set;
    bool force = false;
    bool remove_set_file = false;
};

// Parses the arguments after the program name. Anything but a remove command is refused
// (EINVAL, saying what was expected): this program relays nothing else.
Result<RemoveCall> parse_ssh_command(std::span<const std::string_view> args);

} // namespace rpmem::tools
