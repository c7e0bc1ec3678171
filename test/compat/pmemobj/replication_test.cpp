// SPDX-License-Identifier: BSD-3-Clause
// Debian's unmodified libpmemobj and pmempool replicate through our librpmem.so.1 (loaded with
// LD_LIBRARY_PATH, exactly as they would load PMDK's) to a real rpmemd on 127.0.0.1.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <signal.h>

#include "process.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPoolSize = "32M";
constexpr int kTransactions = 1000;

// What every PMDK program of these tests runs with: our librpmem.so.1 first on the library
// path, the sanitizer runtime our build needs preloaded into Debian's binaries, and local
// parts treated as persistent memory (msync would dominate every figure otherwise).
EnvironmentChanges pmdk_environment(const RpmemdInstance& rpmemd) {
    EnvironmentChanges environment = rpmemd.client_environment();
    environment["LD_LIBRARY_PATH"] = required_environment("LIBRPMEM_DIR");
    if (const char* preload = std::getenv("ASAN_PRELOAD"); preload != nullptr && *preload)
        environment["LD_PRELOAD"] = preload;
    environment["PMEM_IS_PMEM_FORCE"] = "1";
    environment["RPMEM_TIMEOUT"] = "5000";
    return environment;
}

RunResult obj_tx(const std::vector<std::string>& args, const EnvironmentChanges& environment) {
    std::vector<std::string> argv{required_environment("OBJ_TX")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, environment);
}

RunResult pmempool(const std::vector<std::string>& args, const EnvironmentChanges& environment) {
    std::vector<std::string> argv{"pmempool"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, environment);
}

fs::path write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
}

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The initiator's set: one local part and a REPLICA line per target.
fs::path initiator_set(const TempDir& root, const std::vector<std::string>& replicas) {
    std::string text = "PMEMPOOLSET\n" + std::string(kPoolSize) + " " +
                       (root / "initiator" / "pool.part0").string() + "\n";
    for (const std::string& replica : replicas)
        text += "REPLICA " + replica + "\n";
    fs::create_directories(root / "initiator");
    return write(root / "initiator" / "pool.set", text);
}

// The target's set, in rpmemd's pool set directory, with its one part under `part`.
void target_set(const RpmemdInstance& rpmemd, const std::string& name, const fs::path& part) {
    fs::create_directories(part.parent_path());
    rpmemd.write_pool_set(name,
                          "PMEMPOOLSET\n" + std::string(kPoolSize) + " " + part.string() + "\n");
}

} // namespace

TEST_CASE("an unmodified libpmemobj application replicates through a REPLICA line, and the "
          "target alone holds the complete pool") {
    const std::string provider = GENERATE("tcp", "sockets");
    INFO("provider " << provider);
    TempDir root("rpmem-compat-obj");
    RpmemdInstance rpmemd(root);
    const fs::path target_part = root / "target" / "pool.part0";
    target_set(rpmemd, "remote.set", target_part);
    const fs::path set = initiator_set(root, {rpmemd.target() + " remote.set"});
    EnvironmentChanges environment = pmdk_environment(rpmemd);
    environment["RPMEM_PROVIDER"] = provider;

    auto created = obj_tx({"create", set.string(), std::to_string(kTransactions)}, environment);
    INFO(created.output);
    REQUIRE(created.status == 0);

    // Reopening goes through rpmem_open and rpmem_read (libpmemobj checks the remote header
    // and reads the pool descriptor and heap through librpmem).
    auto reopened = obj_tx({"verify", set.string(), std::to_string(kTransactions)}, environment);
    INFO(reopened.output);
    REQUIRE(reopened.status == 0);

    // With rpmemd stopped, the initiator's part and the target's part form a local 2-replica
    // set that PMDK's own checker finds consistent.
    REQUIRE(rpmemd.stop() == 0);
    const fs::path check_set =
        write(root / "check.set", "PMEMPOOLSET\n" + std::string(kPoolSize) + " " +
                                      (root / "initiator" / "pool.part0").string() + "\nREPLICA\n" +
                                      kPoolSize + " " + target_part.string() + "\n");
    auto checked = pmempool({"check", "-v", check_set.string()}, environment);
    INFO(checked.output);
    CHECK(checked.status == 0);
    CHECK_THAT(checked.output, Catch::Contains("consistent"));
    CHECK_THAT(checked.output, !Catch::Contains("not consistent"));

    // Failover: the target's copy as the master replica. The second replica is the
    // initiator's header page followed by the target's data, so no data byte comes from the
    // initiator: libpmemobj sees every transaction only if the target has them all.
    const std::string initiator_bytes = read(root / "initiator" / "pool.part0");
    const std::string target_bytes = read(target_part);
    REQUIRE(initiator_bytes.size() == target_bytes.size());
    const fs::path copy_part = root / "copy" / "pool.part0";
    write(copy_part, initiator_bytes.substr(0, 4096) + target_bytes.substr(4096));
    const fs::path failover_set =
        write(root / "failover.set", "PMEMPOOLSET\n" + std::string(kPoolSize) + " " +
                                         target_part.string() + "\nREPLICA\n" + kPoolSize + " " +
                                         copy_part.string() + "\n");
    auto failover =
        obj_tx({"verify", failover_set.string(), std::to_string(kTransactions)}, environment);
    INFO(failover.output);
    CHECK(failover.status == 0);
}

TEST_CASE("two REPLICA lines to two rpmemd instances") {
    TempDir root("rpmem-compat-two");
    TempDir second_root("rpmem-compat-two-b");
    RpmemdInstance first(root);
    RpmemdInstance second(second_root, {.shared_credentials = first.tls_dir()});
    target_set(first, "a.set", root / "target-a" / "pool.part0");
    target_set(second, "b.set", second_root / "target-b" / "pool.part0");
    const fs::path set =
        initiator_set(root, {first.target() + " a.set", second.target() + " b.set"});
    // One CA signs both daemons' certificates, so one client identity reaches both.
    EnvironmentChanges environment = pmdk_environment(first);
    auto created = obj_tx({"create", set.string(), "200"}, environment);
    INFO(created.output);
    REQUIRE(created.status == 0);
    auto verified = obj_tx({"verify", set.string(), "200"}, environment);
    INFO(verified.output);
    CHECK(verified.status == 0);
}
