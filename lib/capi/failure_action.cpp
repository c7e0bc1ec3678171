// SPDX-License-Identifier: BSD-3-Clause
#include "capi/failure_action.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include "capi/last_error.h"
#include "client/logger.h"

namespace rpmem::capi {

bool called_from_libpmemobj(const void* caller) noexcept {
    Dl_info info{};
    if (caller == nullptr || ::dladdr(caller, &info) == 0 || info.dli_fname == nullptr)
        return false;
    std::string_view file = info.dli_fname;
    if (auto slash = file.rfind('/'); slash != std::string_view::npos)
        file.remove_prefix(slash + 1);
    return file.rfind("libpmemobj.so", 0) == 0;
}

int data_path_status(const Result<void>& result, const client::Replica& replica, const char* step,
                     const void* caller) {
    if (result)
        return 0;
    const client::FailurePolicy policy = replica.failure_policy();
    const bool from_pmemobj = called_from_libpmemobj(caller);
    if (policy != client::FailurePolicy::abort && !from_pmemobj) {
        report(result.error());
        return -1;
    }
    const Error& error = result.error();
    const std::string why =
        policy == client::FailurePolicy::abort
            ? std::string("on-replica-failure = abort")
            : std::string("libpmemobj cannot go on after a failed remote persist (it would crash "
                          "in its own clean-up); set RPMEM_ON_REPLICA_FAILURE=continue to keep "
                          "running on the local pool while the replica is away");
    const std::string text = fmt::format(
        "librpmem: {}: {} failed: {} ({}); aborting the process: {}\n", replica.describe(), step,
        error.message(), std::strerror(error.errno_value()), why);
    // The log (the system log by default) unless it is stderr; stderr always, in one write,
    // whatever the stdio buffers hold: the process is about to end, and this is why.
    if (client::log_destination() != client::LogDestination::standard_error) {
        client::logger().critical("{}", std::string_view(text).substr(0, text.size() - 1));
        client::logger().flush();
    }
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, text.data(), text.size());
    // A real abort (SIGABRT, a core dump where enabled), through the application's own SIGABRT
    // disposition: loading libfabric left it as it was (fabric::FabricLibrary).
    std::abort();
}

} // namespace rpmem::capi
