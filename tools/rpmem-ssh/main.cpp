// SPDX-License-Identifier: BSD-3-Clause
// rpmem-ssh: set RPMEM_SSH=rpmem-ssh for Debian's libpmempool. During `pmempool sync` and
// `pmempool rm` it runs `$RPMEM_SSH ... host "rpmemd --remove SET --force"` itself; this program
// turns exactly that call into a remove request to rpmemd over the TLS control channel (client
// settings as for librpmem: RPMEM_TLS_CA, RPMEM_TLS_CERT, RPMEM_TLS_KEY, ...). Its exit status
// is 0 or the errno, as rpmemd's was; the reason goes to stderr.
#include <cerrno>
#include <cstdio>
#include <string_view>
#include <vector>

#include "client/control.h"
#include "client/settings.h"
#include "ssh_command.h"

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    auto call = rpmem::tools::parse_ssh_command(args);
    if (!call) {
        std::fprintf(stderr, "rpmem-ssh: %s\n", call.error().message().c_str());
        return EINVAL;
    }
    auto settings = rpmem::client::load_settings(rpmem::client::process_environment());
    if (!settings) {
        std::fprintf(stderr, "rpmem-ssh: %s\n", settings.error().message().c_str());
        return settings.error().errno_value();
    }
    auto removed =
        rpmem::client::remove(*settings, call->target, call->pool_set,
                              {.force = call->force, .remove_set_file = call->remove_set_file});
    if (!removed) {
        std::fprintf(stderr, "rpmem-ssh: %s\n", removed.error().message().c_str());
        return removed.error().errno_value();
    }
    return 0;
}
