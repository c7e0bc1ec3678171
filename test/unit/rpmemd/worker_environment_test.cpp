// SPDX-License-Identifier: BSD-3-Clause
// A worker starts with the variables of the libraries it runs, and nothing else of its
// supervisor's environment.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rpmemd/supervisor/worker_process.h"

using rpmem::daemon::worker_environment;

TEST_CASE("a worker keeps libfabric's, libpmem's, the sanitizers' and the loader's variables "
          "only") {
    std::vector<std::string> supervisor{
        "HOME=/root",
        "PATH=/usr/bin",
        "FI_PROVIDER=tcp",
        "PMEM_IS_PMEM_FORCE=1",
        "ASAN_OPTIONS=detect_leaks=0",
        "LD_LIBRARY_PATH=/opt/fabric/lib",
        "RPMEM_FAILPOINT=worker",
        "RPMEM_TOKEN=secret",
        "AWS_SECRET_ACCESS_KEY=secret",
        "FI=not-a-prefix-match",
        "NO_EQUALS_SIGN",
        "XFI_PROVIDER=tcp",
    };
    std::vector<char*> environment;
    for (std::string& entry : supervisor)
        environment.push_back(entry.data());
    environment.push_back(nullptr);

    CHECK(worker_environment(environment.data()) ==
          std::vector<std::string>{"FI_PROVIDER=tcp", "PMEM_IS_PMEM_FORCE=1",
                                   "ASAN_OPTIONS=detect_leaks=0", "LD_LIBRARY_PATH=/opt/fabric/lib",
                                   "RPMEM_FAILPOINT=worker"});
    CHECK(worker_environment(nullptr).empty());
}
