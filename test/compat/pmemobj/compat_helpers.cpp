// SPDX-License-Identifier: BSD-3-Clause
#include "compat_helpers.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <catch2/catch.hpp>

namespace rpmem::test {

namespace fs = std::filesystem;

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

fs::path library_log_in(const TempDir& root, EnvironmentChanges& environment) {
    fs::path log = root / "librpmem.log";
    environment["RPMEM_LOG_FILE"] = log.string();
    return log;
}

void create_pool(const fs::path& set, const std::string& count,
                 const EnvironmentChanges& environment) {
    auto created = obj_tx({"create", set.string(), count}, environment);
    INFO(created.output());
    REQUIRE(created.status == 0);
}

Process spawn_writer(const TempDir& root, const fs::path& set, const std::string& from,
                     const std::string& count, const EnvironmentChanges& environment, int& output) {
    return Process::spawn_piped({required_environment("OBJ_TX"), "run", set.string(), from, count},
                                environment, output, root / "writer.log", root.path());
}

RunResult pmempool(const std::vector<std::string>& args, const EnvironmentChanges& environment) {
    std::vector<std::string> argv{"pmempool"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, environment);
}

RunResult rpmemctl(std::vector<std::string> args, const EnvironmentChanges& environment) {
    args.insert(args.begin(), required_environment("RPMEMCTL"));
    return run(args, environment);
}

fs::path write_file(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
        throw std::runtime_error("writing " + path.string());
    return path;
}

std::string read_file(const fs::path& path) {
    // In one read: pool files are tens of MiB, and a character at a time takes seconds each
    // in a debug build with sanitizers.
    std::error_code error;
    const auto size = fs::file_size(path, error);
    std::ifstream in(path, std::ios::binary);
    if (error || !in)
        return {};
    std::string bytes(size, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    return bytes;
}

fs::path initiator_part(const TempDir& root) {
    return root / "initiator" / "pool.part0";
}

fs::path initiator_set(const TempDir& root, const std::vector<std::string>& replicas) {
    std::string text =
        "PMEMPOOLSET\n" + std::string(kPoolSize) + " " + initiator_part(root).string() + "\n";
    for (const std::string& replica : replicas)
        text += "REPLICA " + replica + "\n";
    return write_file(root / "initiator" / "pool.set", text);
}

void target_set(const RpmemdInstance& rpmemd, const std::string& name, const fs::path& part) {
    fs::create_directories(part.parent_path());
    rpmemd.write_pool_set(name,
                          "PMEMPOOLSET\n" + std::string(kPoolSize) + " " + part.string() + "\n");
}

RunResult verify_target_copy(const TempDir& root, const fs::path& target_part,
                             const std::string& expected_count,
                             const EnvironmentChanges& environment) {
    const std::string initiator_bytes = read_file(initiator_part(root));
    const std::string target_bytes = read_file(target_part);
    if (initiator_bytes.size() != target_bytes.size() || target_bytes.size() < 4096)
        return {1, "the initiator's and the target's parts differ in size"};
    // Work on copies: libpmemobj may recover (roll back) an interrupted transaction on open.
    const fs::path master = write_file(root / "failover" / "master.part0", target_bytes);
    const fs::path replica =
        write_file(root / "failover" / "replica.part0",
                   initiator_bytes.substr(0, 4096) + target_bytes.substr(4096));
    const fs::path set =
        write_file(root / "failover" / "failover.set",
                   "PMEMPOOLSET\n" + std::string(kPoolSize) + " " + master.string() +
                       "\nREPLICA\n" + kPoolSize + " " + replica.string() + "\n");
    return obj_tx({"verify", set.string(), expected_count}, environment);
}

OneRemoteReplica::OneRemoteReplica(const std::string& name)
    : root(name)
    , rpmemd(root)
    , target_part(root / "target" / "pool.part0")
    , environment(pmdk_environment(rpmemd)) {
    target_set(rpmemd, "remote.set", target_part);
    set = initiator_set(root, {rpmemd.target() + " remote.set"});
}

std::uint64_t read_commits(int output, std::uint64_t until,
                           std::chrono::steady_clock::time_point deadline) {
    std::uint64_t committed = 0;
    while (committed < until) {
        auto line = read_line(output, deadline);
        if (!line)
            break;
        if (line->rfind("committed ", 0) == 0)
            committed = std::stoull(line->substr(10));
    }
    return committed;
}

std::uint64_t verified_count(const RunResult& verified) {
    INFO(verified.output());
    const auto at = verified.out.find("verified ");
    REQUIRE(at != std::string::npos);
    return std::stoull(verified.out.substr(at + 9));
}

void check_target_copy_verifies(const TempDir& root, const fs::path& target_part,
                                const std::string& expected_count,
                                const EnvironmentChanges& environment) {
    auto verified = verify_target_copy(root, target_part, expected_count, environment);
    INFO(verified.output());
    CHECK(verified.status == 0);
}

} // namespace rpmem::test
