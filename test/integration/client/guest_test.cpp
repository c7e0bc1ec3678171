// SPDX-License-Identifier: BSD-3-Clause
// librpmem.so.1 is a good guest in its host process (issue 14, item 8): an application that
// loads it with dlopen, as libpmemobj does, and uses it against a real rpmemd keeps its own
// signal dispositions, and its own crash ends as death by its own signal, with no file left in
// its working directory. Debian's libfabric pulls in libinfinipath, whose load-time handlers
// would turn that crash into exit status 1 and a "*,vm.btr" file. rpmemd (supervisor and
// worker) and the tools keep the default crash dispositions the same way: none of them needs
// libfabric at load time.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "process.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> files_in(const fs::path& directory) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(directory))
        names.push_back(entry.path().filename().string());
    return names;
}

// The signals `pid` catches (SigCgt in /proc/PID/status), as a mask with bit N-1 for signal N.
unsigned long long caught_signals(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("SigCgt:", 0) == 0)
            return std::stoull(line.substr(7), nullptr, 16);
    throw std::runtime_error("no SigCgt for process " + std::to_string(pid));
}

// Children are listed under the thread that started them: rpmemd starts workers from its
// handler threads.
std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> children;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
        std::ifstream list(task.path() / "children");
        for (pid_t child; list >> child;)
            children.push_back(child);
    }
    return children;
}

void check_default_crash_dispositions(pid_t pid, const std::string& who) {
    const unsigned long long caught = caught_signals(pid);
    for (const int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) {
        INFO(who << " (pid " << pid << "), signal " << signal);
        CHECK((caught & (1ULL << (signal - 1))) == 0);
    }
}

// Under ASan a crash must reach the kernel, not the sanitizer's handlers.
const char* const kSanitizerLeavesCrashes =
    "handle_segv=0:handle_sigbus=0:handle_sigill=0:handle_sigfpe=0:detect_leaks=0";

RpmemdInstance::Options daemon_options() {
    RpmemdInstance::Options options;
    options.environment["ASAN_OPTIONS"] = kSanitizerLeavesCrashes;
    return options;
}

struct GuestSetup {
    TempDir root{"rpmem-guest"};
    TempDir scratch{"rpmem-guest-cwd"};
    WorkingDirectory here{scratch.path()}; // the guest's and rpmemd's
    RpmemdInstance rpmemd{root, daemon_options()};
    EnvironmentChanges environment = rpmemd.client_environment();

    GuestSetup() {
        rpmemd.write_pool_set("guest.set",
                              "PMEMPOOLSET\n16M " + (root / "guest.part").string() + "\n");
        environment["ASAN_OPTIONS"] = kSanitizerLeavesCrashes;
    }

    RunResult run_guest() const {
        return run({required_environment("CRASH_GUEST"), required_environment("LIBRPMEM"),
                    rpmemd.target(), "guest.set"},
                   environment, std::chrono::seconds(60));
    }
};

} // namespace

TEST_CASE("an application that loads librpmem and then crashes dies by its own signal") {
    GuestSetup setup;
    const RunResult guest = setup.run_guest();
    INFO("guest:\n" << guest.output() << "rpmemd's log:\n" << read_text(setup.rpmemd.log_file()));
    CHECK_THAT(guest.out, Catch::Contains("unchanged after load"));
    CHECK_THAT(guest.out, Catch::Contains("unchanged after persist"));
    CHECK(guest.status == 128 + SIGSEGV);
    CHECK_THAT(guest.err, !Catch::Contains("backtrace"));
    CHECK(files_in(setup.scratch.path()).empty());
}

TEST_CASE("rpmemd's supervisor and worker keep the default crash dispositions") {
    GuestSetup setup;
    // A session made the worker load libfabric and its providers.
    const RunResult guest = setup.run_guest();
    INFO("guest:\n" << guest.output());
    REQUIRE(guest.status == 128 + SIGSEGV);

    Process& supervisor = setup.rpmemd.process();
    check_default_crash_dispositions(supervisor.pid(), "rpmemd");
    const std::vector<pid_t> workers = children_of(supervisor.pid());
    REQUIRE(!workers.empty());
    for (const pid_t worker : workers)
        check_default_crash_dispositions(worker, "rpmemd --worker");

    // A crash of the supervisor itself: its signal, and nothing in its working directory.
    setup.rpmemd.kill(SIGSEGV);
    CHECK(supervisor.wait_for(std::chrono::seconds(20)) == 128 + SIGSEGV);
    CHECK(files_in(setup.scratch.path()).empty());
}

TEST_CASE("no program or library of ours loads libfabric before it opens a fabric") {
    for (const char* variable : {"LIBRPMEM", "RPMEMD", "RPMEMCTL", "RPMEM_BENCH", "RPMEM_SSH"}) {
        const std::string path = required_environment(variable);
        const RunResult dynamic = run({"readelf", "--dynamic", path});
        INFO(path << ":\n" << dynamic.output());
        REQUIRE(dynamic.status == 0);
        CHECK_THAT(dynamic.out, Catch::Contains("(NEEDED)"));
        CHECK_THAT(dynamic.out, !Catch::Contains("libfabric"));
    }
}
