// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl remove TARGET SET [--force] [--pool-set]`: removes a pool on a running rpmemd, as
// rpmem_remove() and PMDK's `rpmemd --remove` do.
#include <string>

#include "client/control.h"
#include "command.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

struct RemoveOptions {
    std::string target;
    std::string pool_set;
    client::RemoveOptions remove;
};

int run_remove(const RemoveOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "remove", remote.error());
    auto removed =
        client::remove(remote->settings, remote->target, options.pool_set, options.remove);
    if (!removed)
        return report_failure(err, "remove", removed.error());
    out << "removed " << options.pool_set << " on " << remote->target.to_string()
        << (options.remove.remove_set_file ? " (with its pool set file)" : "") << "\n";
    return kExitOk;
}

} // namespace

void add_remove_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "remove", "remove a pool on rpmemd",
        "Remove the part files of the pool described by the pool set file SET (relative to\n"
        "rpmemd's pool set directory), as rpmem_remove() does.",
        kRemoteFooter, output, &run_remove);
    command->add_option("TARGET", options->target, "rpmemd, as [user@]HOST[:PORT]")->required();
    command->add_option("SET", options->pool_set, "the pool set file, as rpmemd names it")
        ->required();
    command->add_flag("-f,--force", options->remove.force, "ignore missing or locked parts");
    command->add_flag("-s,--pool-set", options->remove.remove_set_file,
                      "also remove the pool set file");
}

} // namespace rpmem::tools
