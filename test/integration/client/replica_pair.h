// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "process.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

namespace rpmem::test {

// Two real rpmemd with one set of credentials, each serving pool.set (2 MiB, no headers, one
// part at ROOT/pool.part): the two replicas of one local pool, as libpmemobj's REPLICA lines.
// `config_lines` go to both daemons' configs.
struct ReplicaPair {
    explicit ReplicaPair(const std::string& name, const std::vector<std::string>& config_lines = {})
        : root_a(name + "-a")
        , root_b(name + "-b")
        , a(root_a, {.config_lines = config_lines})
        , b(root_b, {.config_lines = config_lines, .shared_credentials = a.tls_dir()}) {
        for (auto [rpmemd, root] : {std::pair{&a, &root_a}, std::pair{&b, &root_b}})
            rpmemd->write_pool_set("pool.set", "PMEMPOOLSET\nOPTION NOHDRS\n2M " +
                                                   (*root / "pool.part").string() + "\n");
    }

    std::filesystem::path part_a() const { return root_a / "pool.part"; }
    // A client of both (they share credentials): a's TLS files, RPMEM_TIMEOUT `timeout_ms`,
    // librpmem's log at info level in `log` and its usage records in usage_file(log).
    EnvironmentChanges client_environment(const std::filesystem::path& log, int timeout_ms) const {
        EnvironmentChanges environment = a.client_environment();
        environment["RPMEM_TIMEOUT"] = std::to_string(timeout_ms);
        environment["RPMEM_LOG_FILE"] = log.string();
        environment["RPMEM_LOG_LEVEL"] = "info";
        environment["RPMEM_USAGE_FILE"] = usage_file(log).string();
        return environment;
    }
    static std::filesystem::path usage_file(const std::filesystem::path& log) {
        return log.string() + ".usage.jsonl";
    }
    std::filesystem::path part_b() const { return root_b / "pool.part"; }

    TempDir root_a;
    TempDir root_b;
    RpmemdInstance a;
    RpmemdInstance b;
};

} // namespace rpmem::test
