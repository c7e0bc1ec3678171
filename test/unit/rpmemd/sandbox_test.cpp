// SPDX-License-Identifier: BSD-3-Clause
// The worker sandbox, entered in forked children only (it is irreversible): what stays possible
// (reading beneath a read-only path, threads, mapping and msync of a pool fd received over the
// supervisor's socket, IP sockets) and what no longer is (other files, writing, exec, fork,
// packet and unix sockets, signals to other processes, descriptors not kept, root). Each layer
// is checked on its own as well: Landlock with the system call filter off, where it matters.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpmemd/worker/sandbox.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;
using test::TempDir;

namespace {

// What a child found: "" when every expectation held, "skip: why" when the kernel lacks what
// the case is about, else the first expectation that failed.
using ChildBody = std::function<std::string(const SandboxReport&)>;

struct ChildOutcome {
    int status = 0;
    std::string message;
};

// Forks; the child enters the sandbox with `options` (plus stderr and its report pipe kept),
// runs `body` and reports through the pipe and its exit status. The parent only waits.
ChildOutcome run_sandboxed(SandboxOptions options, const ChildBody& body) {
    int report[2];
    REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(report[0]);
        options.keep_fds.push_back(2);
        options.keep_fds.push_back(report[1]);
        std::string message;
        int code = 0;
        if (auto entered = enter_sandbox(options); !entered) {
            message = "enter_sandbox: " + entered.error().message();
            code = 2;
        } else {
            message = body(*entered);
            code = message.empty() || message.rfind("skip:", 0) == 0 ? 0 : 1;
        }
        (void)!::write(report[1], message.data(), message.size());
        ::_exit(code); // not exit(): nothing of the test process's teardown runs twice
    }
    ::close(report[1]);
    ChildOutcome outcome;
    char buffer[512];
    ssize_t got = 0;
    while ((got = ::read(report[0], buffer, sizeof buffer)) > 0)
        outcome.message.append(buffer, static_cast<std::size_t>(got));
    ::close(report[0]);
    REQUIRE(::waitpid(child, &outcome.status, 0) == child);
    return outcome;
}

void expect_success(const ChildOutcome& outcome) {
    INFO("child: " << outcome.message);
    REQUIRE(WIFEXITED(outcome.status));
    CHECK(WEXITSTATUS(outcome.status) == 0);
    if (outcome.message.rfind("skip:", 0) == 0)
        WARN(outcome.message);
}

// "" if `call` failed with `expected`, else what happened.
std::string expect_errno(const char* what, long result, int expected) {
    if (result >= 0)
        return fmt::format("{} succeeded, expected {}", what, std::strerror(expected));
    if (errno != expected)
        return fmt::format("{} failed with {}, expected {}", what, std::strerror(errno),
                           std::strerror(expected));
    return "";
}

#define RETURN_IF(message)                                                                         \
    do {                                                                                           \
        if (std::string found = (message); !found.empty())                                         \
            return found;                                                                          \
    } while (false)

std::string read_file(const std::string& path, std::string& text) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fmt::format("opening {} for reading: {}", path, std::strerror(errno));
    char buffer[256];
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    ::close(fd);
    if (got < 0)
        return fmt::format("reading {}: {}", path, std::strerror(errno));
    text.assign(buffer, static_cast<std::size_t>(got));
    return "";
}

std::string no_landlock(const SandboxReport& report) {
    return report.landlock_abi == 0 ? "skip: Landlock " + report.landlock_note : "";
}

} // namespace

TEST_CASE("a file beneath a read-only path reads, one outside does not open",
          "[sandbox][landlock]") {
    TempDir allowed;
    TempDir outside;
    const std::string inside_file = allowed.write("sub/part", "pool bytes");
    const std::string outside_file = outside.write("secret", "not yours");
    const bool filter = GENERATE(true, false);
    SandboxOptions options;
    options.read_only_paths = {allowed.path().string()};
    options.filter_system_calls = filter;
    expect_success(run_sandboxed(options, [&](const SandboxReport& report) -> std::string {
        RETURN_IF(no_landlock(report));
        std::string text;
        RETURN_IF(read_file(inside_file, text));
        if (text != "pool bytes")
            return "read '" + text + "' from " + inside_file;
        RETURN_IF(expect_errno("opening a file outside the read-only paths",
                               ::open(outside_file.c_str(), O_RDONLY | O_CLOEXEC), EACCES));
        RETURN_IF(expect_errno("opening /etc/passwd", ::open("/etc/passwd", O_RDONLY), EACCES));
        return "";
    }));
}

TEST_CASE("a single read-only file may be named", "[sandbox][landlock]") {
    TempDir dir;
    const std::string file = dir.write("only", "just this");
    const std::string sibling = dir.write("other", "not this");
    SandboxOptions options;
    options.read_only_paths = {file};
    expect_success(run_sandboxed(options, [&](const SandboxReport& report) -> std::string {
        RETURN_IF(no_landlock(report));
        std::string text;
        RETURN_IF(read_file(file, text));
        return expect_errno("opening a sibling", ::open(sibling.c_str(), O_RDONLY), EACCES);
    }));
}

TEST_CASE("nothing can be written, made or removed", "[sandbox][landlock][seccomp]") {
    TempDir allowed;
    const std::string file = allowed.write("part", "pool bytes");
    SECTION("with the system call filter: EPERM before Landlock is asked") {
        SandboxOptions options;
        options.read_only_paths = {allowed.path().string()};
        expect_success(run_sandboxed(options, [&](const SandboxReport&) -> std::string {
            RETURN_IF(expect_errno("opening for writing", ::open(file.c_str(), O_WRONLY), EPERM));
            RETURN_IF(expect_errno("opening read-write", ::open(file.c_str(), O_RDWR), EPERM));
            RETURN_IF(expect_errno(
                "creating", ::open((allowed / "new").c_str(), O_RDONLY | O_CREAT, 0600), EPERM));
            RETURN_IF(expect_errno("truncating", ::truncate(file.c_str(), 0), EPERM));
            RETURN_IF(expect_errno("mkdir", ::mkdir((allowed / "dir").c_str(), 0700), EPERM));
            RETURN_IF(expect_errno("unlink", ::unlink(file.c_str()), EPERM));
            return "";
        }));
    }
    SECTION("Landlock alone: EACCES") {
        SandboxOptions options;
        options.read_only_paths = {allowed.path().string()};
        options.filter_system_calls = false;
        expect_success(run_sandboxed(options, [&](const SandboxReport& report) -> std::string {
            RETURN_IF(no_landlock(report));
            RETURN_IF(expect_errno("opening for writing", ::open(file.c_str(), O_WRONLY), EACCES));
            RETURN_IF(expect_errno(
                "creating", ::open((allowed / "new").c_str(), O_WRONLY | O_CREAT, 0600), EACCES));
            RETURN_IF(expect_errno("truncating", ::truncate(file.c_str(), 0), EACCES));
            RETURN_IF(expect_errno("mkdir", ::mkdir((allowed / "dir").c_str(), 0700), EACCES));
            RETURN_IF(expect_errno("unlink", ::unlink(file.c_str()), EACCES));
            RETURN_IF(expect_errno("mkdir in /tmp", ::mkdir("/tmp/rpmem-sandbox-x", 0700), EACCES));
            return "";
        }));
    }
    // The files are untouched.
    std::string text;
    CHECK(read_file(file, text).empty());
    CHECK(text == "pool bytes");
}

TEST_CASE("no program can be executed and no process forked", "[sandbox][seccomp]") {
    SandboxOptions options;
    options.read_only_paths = {"/usr", "/bin"};
    SECTION("with the system call filter") {
        expect_success(run_sandboxed(options, [](const SandboxReport&) -> std::string {
            char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
            RETURN_IF(expect_errno("execve", ::execve("/bin/true", argv, environ), EPERM));
            RETURN_IF(expect_errno("fork", ::fork(), EPERM));
            return "";
        }));
    }
    SECTION("Landlock alone refuses the execution") {
        options.filter_system_calls = false;
        expect_success(run_sandboxed(options, [](const SandboxReport& report) -> std::string {
            RETURN_IF(no_landlock(report));
            char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
            return expect_errno("execve", ::execve("/bin/true", argv, environ), EACCES);
        }));
    }
}

TEST_CASE("only IP and netlink sockets and unix socket pairs can be made", "[sandbox][seccomp]") {
    expect_success(run_sandboxed({}, [](const SandboxReport&) -> std::string {
        RETURN_IF(expect_errno("socket(AF_PACKET)", ::socket(AF_PACKET, SOCK_RAW, 0), EPERM));
        RETURN_IF(expect_errno("socket(AF_UNIX)", ::socket(AF_UNIX, SOCK_STREAM, 0), EPERM));
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
            return fmt::format("socketpair (libfabric's signals): {}", std::strerror(errno));
        ::close(pair[0]);
        ::close(pair[1]);
        for (int family : {AF_INET, AF_INET6}) {
            int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0 && !(family == AF_INET6 && errno == EAFNOSUPPORT))
                return fmt::format("socket({}): {}", family, std::strerror(errno));
            if (fd >= 0)
                ::close(fd);
        }
        return "";
    }));
}

TEST_CASE("a thread can be started and joined; the filter covers it", "[sandbox][seccomp]") {
    expect_success(run_sandboxed({}, [](const SandboxReport&) -> std::string {
        std::string found = "thread did not run";
        std::thread thread([&found] {
            found = expect_errno("socket(AF_PACKET) in a thread", ::socket(AF_PACKET, SOCK_RAW, 0),
                                 EPERM);
        });
        thread.join();
        return found;
    }));
}

TEST_CASE("a sandbox is refused once a thread runs", "[sandbox]") {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        int release[2];
        if (::pipe(release) != 0)
            ::_exit(3);
        std::thread waiter([&release] {
            char byte = 0;
            (void)!::read(release[0], &byte, 1);
        });
        auto entered = enter_sandbox({});
        (void)!::write(release[1], "x", 1);
        waiter.join();
        ::_exit(!entered && entered.error().errno_value() == EBUSY ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a pool fd received over the supervisor's socket maps, persists and unmaps",
          "[sandbox][seccomp]") {
    TempDir dir;
    const std::string part = dir / "part";
    constexpr std::size_t kSize = 2 * 4096;
    {
        int fd = ::open(part.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(::ftruncate(fd, kSize) == 0);
        ::close(fd);
    }
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
    const int worker_end = pair[1];
    SandboxOptions options;
    options.keep_fds = {worker_end};

    // The parent sends the part's fd only once the child is sandboxed (it sends after the
    // fork; the child's recvmsg waits for it).
    const pid_t sender = ::fork();
    REQUIRE(sender >= 0);
    if (sender == 0) {
        int fd = ::open(part.c_str(), O_RDWR | O_CLOEXEC);
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        char byte = 'p';
        iovec vector{&byte, 1};
        msghdr message{};
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
        ::_exit(fd >= 0 && ::sendmsg(pair[0], &message, 0) == 1 ? 0 : 1);
    }

    expect_success(run_sandboxed(options, [&](const SandboxReport&) -> std::string {
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        char byte = 0;
        iovec vector{&byte, 1};
        msghdr message{};
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        if (::recvmsg(worker_end, &message, MSG_CMSG_CLOEXEC) != 1)
            return fmt::format("recvmsg: {}", std::strerror(errno));
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        if (header == nullptr || header->cmsg_type != SCM_RIGHTS)
            return "no fd arrived";
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
        // Reserve a range, then map the part into it, as the worker does with a pool's parts.
        void* range = ::mmap(nullptr, 4 * kSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (range == MAP_FAILED)
            return fmt::format("reserving: {}", std::strerror(errno));
        void* mapped = ::mmap(range, kSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
        if (mapped != range)
            return fmt::format("mapping the part: {}", std::strerror(errno));
        ::close(fd);
        std::memcpy(mapped, "persisted", 10);
        if (::msync(mapped, kSize, MS_SYNC) != 0)
            return fmt::format("msync: {}", std::strerror(errno));
        RETURN_IF(expect_errno("mprotect to executable",
                               ::mprotect(mapped, kSize, PROT_READ | PROT_EXEC), EPERM));
        if (::munmap(range, 4 * kSize) != 0)
            return fmt::format("munmap: {}", std::strerror(errno));
        return "";
    }));
    int status = 0;
    REQUIRE(::waitpid(sender, &status, 0) == sender);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    ::close(pair[0]);
    ::close(pair[1]);
    std::string text;
    CHECK(read_file(part, text).empty());
    CHECK(std::string(text.c_str()) == "persisted");
}

TEST_CASE("descriptors not kept are closed; standard streams point at /dev/null", "[sandbox]") {
    const int kept = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int dropped = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(kept >= 0);
    REQUIRE(dropped >= 0);
    struct stat null_status {};
    REQUIRE(::stat("/dev/null", &null_status) == 0);
    SandboxOptions options;
    options.keep_fds = {kept};
    expect_success(run_sandboxed(options, [&](const SandboxReport&) -> std::string {
        if (::fcntl(kept, F_GETFD) < 0)
            return "the kept descriptor was closed";
        RETURN_IF(expect_errno("fcntl on a descriptor not kept", ::fcntl(dropped, F_GETFD), EBADF));
        for (int fd : {0, 1}) {
            struct stat status {};
            if (::fstat(fd, &status) != 0 || status.st_rdev != null_status.st_rdev)
                return fmt::format("fd {} is not /dev/null", fd);
        }
        return "";
    }));
    ::close(kept);
    ::close(dropped);

    constexpr int kNotOpen = 900;
    REQUIRE(::fcntl(kNotOpen, F_GETFD) < 0);
    SandboxOptions missing;
    missing.keep_fds = {kNotOpen};
    const ChildOutcome outcome = run_sandboxed(missing, [](const SandboxReport&) {
        return std::string("entered with a descriptor to keep that is not open");
    });
    CHECK(outcome.message.find("is not open") != std::string::npos);
}

TEST_CASE("no_new_privs is set and the process is not dumpable", "[sandbox]") {
    const bool filter = GENERATE(true, false);
    SandboxOptions options;
    options.filter_system_calls = filter;
    expect_success(run_sandboxed(options, [filter](const SandboxReport& report) -> std::string {
        if (report.seccomp != filter)
            return "the report's seccomp flag is wrong";
        if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
            return "no_new_privs is not set";
        if (::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
            return "the process is dumpable";
        return "";
    }));
}

TEST_CASE("other processes cannot be signalled", "[sandbox][landlock][seccomp]") {
    const bool filter = GENERATE(true, false);
    SandboxOptions options;
    options.filter_system_calls = filter;
    expect_success(run_sandboxed(options, [filter](const SandboxReport& report) -> std::string {
        if (!filter && report.landlock_abi < 6)
            return "skip: Landlock signal scoping needs ABI 6";
        // Signal 0 checks the permission only.
        RETURN_IF(expect_errno("kill(parent, 0)", ::kill(::getppid(), 0), EPERM));
        return "";
    }));
}

TEST_CASE("running as root, the worker's user and group replace root for good",
          "[sandbox][privileges]") {
    if (::geteuid() != 0) {
        WARN("not root: the privilege drop is not exercised");
        SandboxOptions options;
        options.uid = 65534;
        options.gid = 65534;
        const ChildOutcome outcome = run_sandboxed(options, [](const SandboxReport&) {
            return std::string("switched users without being root");
        });
        CHECK(outcome.message.find("cannot switch") != std::string::npos);
        return;
    }
    const bool filter = GENERATE(true, false);
    SandboxOptions options;
    options.uid = 65534;
    options.gid = 65534;
    options.filter_system_calls = filter;
    expect_success(run_sandboxed(options, [](const SandboxReport& report) -> std::string {
        if (!report.dropped_privileges)
            return "the report says nothing was dropped";
        uid_t r = 0, e = 0, s = 0;
        gid_t rg = 0, eg = 0, sg = 0;
        ::getresuid(&r, &e, &s);
        ::getresgid(&rg, &eg, &sg);
        if (r != 65534 || e != 65534 || s != 65534 || rg != 65534 || eg != 65534 || sg != 65534)
            return fmt::format("ids are {}/{}/{} {}/{}/{}", r, e, s, rg, eg, sg);
        gid_t groups[8];
        int count = ::getgroups(8, groups);
        if (count != 1 || groups[0] != 65534)
            return fmt::format("{} supplementary groups", count);
        RETURN_IF(expect_errno("setuid(0)", ::setuid(0), EPERM));
        RETURN_IF(expect_errno("setgid(0)", ::setgid(0), EPERM));
        return "";
    }));

    SECTION("a user without a group is refused") {
        SandboxOptions alone;
        alone.uid = 65534;
        const ChildOutcome outcome =
            run_sandboxed(alone, [](const SandboxReport&) { return std::string("entered"); });
        CHECK(outcome.message.find("needs a worker group") != std::string::npos);
    }
}

TEST_CASE("the worker's user and group resolve by name or number", "[sandbox][config]") {
    CHECK(resolve_user("root") == uid_t{0});
    CHECK(resolve_user("65534") == uid_t{65534});
    CHECK(resolve_group("0") == gid_t{0});
    CHECK(resolve_group("root") == gid_t{0});
    if (auto nobody = resolve_user("nobody"))
        CHECK(*nobody == 65534);
    auto unknown = resolve_user("no-such-user-rpmem");
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().errno_value() == ENOENT);
    CHECK(unknown.error().message().find("no-such-user-rpmem") != std::string::npos);
    auto bad_group = resolve_group("12x");
    REQUIRE_FALSE(bad_group);
    CHECK(bad_group.error().errno_value() == ENOENT);
}
