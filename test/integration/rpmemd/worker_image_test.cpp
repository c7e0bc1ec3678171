// SPDX-License-Identifier: BSD-3-Clause
// Where rpmemd's workers come from (rpmemd/worker/worker_image.h): the supervisor's own image,
// held open since start. Run as an unprivileged user from a directory that user cannot
// traverse (PMDK's TEST scripts run rpmemd as nobody), rpmemd serves sessions, its workers
// running as that user too, and a file replaced under the running daemon changes nothing of
// what its workers run. And the two halves of a daemon greet each other with their
// versions: a worker of another build is refused (a test-build failpoint stands in for one).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <catch2/catch.hpp>
#include <pwd.h>
#include <unistd.h>

#include "client/replica.h"
#include "client_settings.h"
#include "precondition.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;

std::optional<std::string> rpmem::test::missing_precondition() {
    return missing_root();
}

namespace {

constexpr std::size_t kPoolBytes = 2 << 20; // one 2 MiB part (TargetHost::write_set)

// The real uid of a running process, from /proc/PID/status.
uid_t uid_of(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with("Uid:"))
            return static_cast<uid_t>(std::stoul(line.substr(4)));
    FAIL("no Uid line for pid " << pid);
    return 0;
}

// What `user` gets trying to reach `path`: "" when it can, else why not.
std::string reach_as(const passwd& user, const std::filesystem::path& path) {
    const ChildOutcome outcome = run_in_child([&](int) -> std::string {
        if (::setgid(user.pw_gid) != 0 || ::setuid(user.pw_uid) != 0)
            return std::string("becoming the user: ") + std::strerror(errno);
        if (::access(path.c_str(), X_OK) != 0)
            return std::strerror(errno);
        return "";
    });
    return outcome.message;
}

} // namespace

TEST_CASE("rpmemd run as nobody from a directory nobody cannot traverse serves sessions") {
    const passwd* nobody = ::getpwnam("nobody");
    REQUIRE(nobody != nullptr);
    TempDir private_dir("rpmemd-image"); // mkdtemp: 0700, root's
    const std::filesystem::path image = private_dir.path() / "rpmemd";
    std::filesystem::copy_file(required_environment("RPMEMD"), image);
    std::filesystem::permissions(image, std::filesystem::perms(0755));
    // The situation under test: the path is closed to the daemon's user.
    REQUIRE(reach_as(*nobody, image) == std::strerror(EACCES));

    TargetHost::Options options;
    options.start = false;
    options.run_as = "nobody";
    options.executable = image.string();
    TargetHost host(options);
    host.write_set("n.set", "n", 1);
    host.start();
    CHECK(uid_of(host.daemon().pid()) == nobody->pw_uid);
    // And an upgrade replaces the file under the running daemon, as a package manager does
    // (a new file renamed over it): here with one that is no rpmemd at all.
    const std::filesystem::path replacement = private_dir.path() / "rpmemd.new";
    private_dir.write("rpmemd.new", "#!/bin/sh\nexit 1\n", 0755);
    std::filesystem::rename(replacement, image);

    // A session with its data path: the pool is created, a persist reaches the part file.
    PageBuffer memory = pool_buffer(kPoolBytes);
    const std::string pattern = "written by a session of an rpmemd running as nobody";
    std::memcpy(memory.data() + 8192, pattern.data(), pattern.size());
    unsigned lanes = 1;
    PoolAttributes attributes = pmemobj_attributes();
    auto replica = client::Replica::create(client_settings(host.credentials().client()),
                                           Target{"", "127.0.0.1", host.port()}, "n.set",
                                           {memory.data(), kPoolBytes}, lanes, &attributes);
    INFO(host.dir().read("rpmemd.log"));
    REQUIRE(replica);
    REQUIRE((*replica)->persist(8192, 4096, 0, client::PersistMode::strict));

    const pid_t worker = host.last_worker_pid();
    REQUIRE(worker != 0);
    CHECK(uid_of(worker) == nobody->pw_uid);
    REQUIRE((*replica)->close());

    std::ifstream part(host.dir() / "n.0", std::ios::binary);
    std::string stored(pattern.size(), '\0');
    part.seekg(8192);
    part.read(stored.data(), static_cast<std::streamsize>(stored.size()));
    CHECK(stored == pattern);
    CHECK(host.log_count("Permission denied") == 0);
}

#ifdef RPMEM_FAILPOINTS
TEST_CASE("a worker of another version is refused, and refuses its supervisor") {
    TargetHost::Options options;
    options.environment = {{"RPMEM_FAILPOINT", "worker-version-mismatch"}};
    TargetHost host(options);
    host.write_set("v.set", "v", 1);
    PageBuffer memory = pool_buffer(kPoolBytes);
    unsigned lanes = 1;
    PoolAttributes attributes = pmemobj_attributes();
    auto replica = client::Replica::create(client_settings(host.credentials().client()),
                                           Target{"", "127.0.0.1", host.port()}, "v.set",
                                           {memory.data(), kPoolBytes}, lanes, &attributes);
    REQUIRE_FALSE(replica);
    CHECK_THAT(replica.error().message(),
               Catch::Contains("starting the worker for 'alice': the worker for 'alice' is "
                               "rpmemd '") &&
                   Catch::Contains("must be one build"));
    INFO(host.dir().read("rpmemd.log"));
    // Each side names both versions; the worker leaves with its own status.
    CHECK(host.wait_for_log("-other', this supervisor rpmemd '"));
    CHECK(host.wait_for_log("this worker rpmemd '"));
    CHECK(host.wait_for_log("-other': exiting"));
    CHECK(host.wait_for_log("exited with status 4"));
    // A refused worker leaves the daemon serving: the next session meets the same refusal,
    // not a hang.
    CHECK(host.client());
}
#endif
