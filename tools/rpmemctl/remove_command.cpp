// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl remove TARGET SET [--force] [--pool-set]`: removes a pool on a running rpmemd, as
// rpmem_remove() and PMDK's `rpmemd --remove` do.
#include <string>

#include "client/control.h"
#include "command.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kUsage =
    "usage: rpmemctl remove [user@]HOST[:PORT] SET [--force] [--pool-set]\n"
    "\n"
    "Removes the part files of the pool described by the pool set file SET (relative to\n"
    "rpmemd's pool set directory).\n"
    "\n"
    "  --force     ignore missing or locked parts\n"
    "  --pool-set  also remove the pool set file\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

} // namespace

int run_remove_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
    if (printed_help(args, kUsage, out))
        return kExitOk;
    std::vector<std::string_view> positional;
    client::RemoveOptions options;
    for (std::string_view arg : args) {
        if (arg == "--force" || arg == "-f") {
            options.force = true;
        } else if (arg == "--pool-set" || arg == "-s") {
            options.remove_set_file = true;
        } else if (arg.starts_with("-") || positional.size() == 2) {
            err << "rpmemctl remove: unexpected argument '" << arg << "'\n" << kUsage;
            return kExitUsage;
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() != 2) {
        err << "rpmemctl remove: expected a target and a pool set name\n" << kUsage;
        return kExitUsage;
    }
    auto remote = RemoteTarget::from(positional[0]);
    if (!remote) {
        err << "rpmemctl remove: " << remote.error().message() << "\n";
        return kExitFailure;
    }
    auto removed = client::remove(remote->settings, remote->target, positional[1], options);
    if (!removed) {
        err << "rpmemctl remove: " << removed.error().message() << "\n";
        return kExitFailure;
    }
    out << "removed " << positional[1] << " on " << remote->target.to_string()
        << (options.remove_set_file ? " (with its pool set file)" : "") << "\n";
    return kExitOk;
}

} // namespace rpmem::tools
