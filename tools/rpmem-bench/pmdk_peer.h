// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/error.h"
#include "base/unique_fd.h"
#include "pmemobj_workload.h"
#include "result_report.h"

namespace rpmem::bench {

// PMDK's own librpmem and rpmemd (1.12.1, the last release that had them, rebuilt from its
// source tree), measured as the peer `rpmem-bench pmemobj --pmdk-peer` compares us with: the
// same libpmemobj workload on a pool set with a REPLICA line, served the way PMDK serves it
// (rpmemd started over "ssh", here a stand-in that runs it on this host, on the sockets
// provider PMDK supports besides verbs), once with PMDK's default GPSPM and once with APM.
//
// libpmemobj dlopens the one SONAME librpmem.so.1 once per process, so the peer runs in a child
// forked before this process loads ours or starts a thread; it waits until measure() asks, then
// runs its rows while the parent only waits, and sends them back over a pipe.
class PmdkPeer {
public:
    // The PMDK tree it needs: src/nondebug/librpmem.so.1 and src/tools/rpmemd/rpmemd (`make
    // librpmem libpmem common core` and `make -C tools rpmemd` in src, with libndctl-dev as
    // Debian builds PMDK: without it rpmemd refuses the shutdown-state feature libpmemobj sets).
    struct Build {
        std::filesystem::path librpmem;
        std::filesystem::path rpmemd;
        static Result<Build> in(const std::filesystem::path& tree);
    };
    // One row of the child's, measured by `measure` (the same function as the parent's rows).
    using Measure = std::function<Result<ResultRow>(const std::string& name, WorkloadPool&)>;
    struct Row {
        ResultRow row;
        std::uint64_t transactions = 0;
        double client_cpu_s = 0; // the program
        double daemon_cpu_s = 0; // PMDK's rpmemd
    };

    // Forks the child now; call it while the process has no other thread.
    static Result<PmdkPeer> fork(Build build, std::filesystem::path pool_dir, std::size_t pool_size,
                                 Measure measure);
    PmdkPeer(PmdkPeer&& other) noexcept;
    PmdkPeer& operator=(PmdkPeer&&) = delete;
    ~PmdkPeer(); // a child never asked is killed and reaped

    // Lets the child run its rows (GPSPM, then APM) and returns them.
    Result<std::vector<Row>> measure();

    const Build& build() const noexcept { return build_; }

private:
    PmdkPeer(Build build, pid_t child, UniqueFd go, UniqueFd rows) noexcept;
    void reap(bool kill) noexcept;

    Build build_;
    pid_t child_ = -1;
    UniqueFd go_;   // parent -> child: one byte, "run"
    UniqueFd rows_; // child -> parent: the outcome and the rows
};

} // namespace rpmem::bench
