// SPDX-License-Identifier: BSD-3-Clause
// The target of the log tests: a real rpmemd with a pool set for rpmem-hello (40 MiB; the
// example's pool is 32 MiB), the test in a scratch directory, and the client environment with
// librpmem's log settings unset, so that the defaults are what is tested.
#pragma once

#include <string>

#include "process.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

namespace rpmem::test {

struct HelloTarget {
    TempDir root;
    WorkingDirectory scratch{root.path()};
    RpmemdInstance rpmemd{root};
    EnvironmentChanges environment = rpmemd.client_environment();
    const std::string hello = required_environment("RPMEM_HELLO");

    HelloTarget() {
        rpmemd.write_pool_set("hello.set",
                              "PMEMPOOLSET\n40M " + (root / "hello.part").string() + "\n");
        environment["RPMEM_LOG_LEVEL"] = std::nullopt;
        environment["RPMEM_LOG_FILE"] = std::nullopt;
    }

    RunResult run_hello(const std::string& target) const {
        return run({hello, target, "hello.set"}, environment);
    }
    RunResult run_hello() const { return run_hello(rpmemd.target()); }
};

} // namespace rpmem::test
