// SPDX-License-Identifier: BSD-3-Clause
// rpmem::ReplicaGroup (lib/capi/replica_group.h, installed as <rpmem/replica_group.h>) against
// two real rpmemd: a group persist reaches both pool files, the second replica's persists are
// answered by the fan-out (librpmem's usage line counts them), and a lost replica is named in
// the failures while the other goes on. In forked children: librpmem reads its settings once
// per process.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "client/session_usage.h"
#include "pool_memory.h"
#include "process.h"
#include "replica_group.h"
#include "replica_pair.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kPool = kPoolSize;

struct Pair : ReplicaPair {
    Pair()
        : ReplicaPair("rpmem-group") {}
    std::vector<rpmem::ReplicaTarget> targets() const {
        return {{a.target(), "pool.set"}, {b.target(), "pool.set"}};
    }
};

// In a forked child: the child's until it exits.
std::byte* local_pool() {
    return pool_memory().release();
}

void client_settings(const Pair& pair, const fs::path& log) {
    apply_environment(pair.client_environment(log, 1500));
}

std::string describe(const std::vector<rpmem::ReplicaFailure>& failures) {
    std::string text;
    for (const auto& failure : failures)
        text += "replica " + std::to_string(failure.replica) + ": " + failure.message + "\n";
    return text;
}

} // namespace

TEST_CASE("ReplicaGroup: a group persist reaches every replica with one fan-out") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    constexpr int kRounds = 100;
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        client_settings(pair, log);
        std::byte* pool = local_pool();
        unsigned lanes = 2;
        const auto targets = pair.targets();
        auto group = rpmem::ReplicaGroup::create(targets, pool, kPool, lanes);
        if (group.size() != 2 || lanes == 0)
            return "the group does not hold two replicas";
        for (int i = 1; i <= kRounds; ++i) {
            const std::size_t offset = static_cast<std::size_t>(i) * 256;
            std::memset(pool + offset, i, 256);
            if (auto failed = group.persist(offset, 256, i % lanes); !failed.empty())
                return describe(failed);
        }
        if (auto failed = group.close(); !failed.empty())
            return describe(failed);
        const std::string local(reinterpret_cast<const char*>(pool), kPool);
        if (read_text(pair.root_a / "pool.part") != local ||
            read_text(pair.root_b / "pool.part") != local)
            return "a replica's pool file differs from the local pool";
        return "";
    });
    const std::string text = read_text(log);
    INFO(outcome.message << "\n" << text);
    REQUIRE(outcome.status == 0);
    auto records = rpmem::client::read_usage_records(Pair::usage_file(log));
    REQUIRE(records);
    // Closed the last first: b's record, then a's.
    REQUIRE(records->size() == 2);
    CHECK((*records)[0].target == pair.b.target());
    CHECK((*records)[0].posted_by_sibling == kRounds);
    CHECK((*records)[1].target == pair.a.target());
    CHECK((*records)[1].posted_by_sibling == 0);
}

TEST_CASE("ReplicaGroup: a lost replica is named in the failures, the other goes on") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        client_settings(pair, log);
        std::byte* pool = local_pool();
        unsigned lanes = 1;
        const auto targets = pair.targets();
        auto group = rpmem::ReplicaGroup::create(targets, pool, kPool, lanes);
        if (auto failed = group.persist(4096, 64, 0); !failed.empty())
            return describe(failed);
        ::kill(pair.b.process().pid(), SIGKILL); // not this child's: no reaping here
        // The kill lands asynchronously: persist until b's failure shows (bounded).
        std::vector<rpmem::ReplicaFailure> failed;
        for (int i = 0; i < 2000 && failed.empty(); ++i) {
            std::memset(pool + 4096, i, 64);
            failed = group.persist(4096, 64, 0);
        }
        if (failed.size() != 1 || failed[0].replica != 1 || failed[0].error == 0)
            return "expected replica 1 alone to fail, got:\n" + describe(failed);
        if (failed[0].message.empty())
            return "the failure carries no message";
        // Sticky for b, and a keeps working.
        failed = group.persist(8192, 64, 0);
        if (failed.size() != 1 || failed[0].replica != 1)
            return "after the loss:\n" + describe(failed);
        (void)group.close();
        return "";
    });
    INFO(outcome.message << "\n" << read_text(log));
    CHECK(outcome.status == 0);
}
