// SPDX-License-Identifier: BSD-3-Clause
// The worker sandbox, entered in forked children only (it is irreversible): what stays possible
// (threads, mapping and msync of a pool fd received over the supervisor's socket, IP sockets)
// and what no longer is (writing, exec, fork, packet and unix sockets, signals to other
// processes, descriptors not kept), on any kernel. Landlock on its own is checked in
// sandbox_landlock_test.cpp, the privilege drop in sandbox_privileges_test.cpp: each needs
// something of the host and is reported skipped where that is missing.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpmemd/worker/sandbox.h"
#include "sandbox_test_support.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;
using namespace rpmem::test;

TEST_CASE("nothing can be written, made or removed: EPERM before Landlock is asked",
          "[sandbox][seccomp]") {
    TempDir allowed;
    const std::string file = allowed.write("part", "pool bytes");
    SandboxOptions options;
    options.read_only_paths = {allowed.path().string()};
    expect_success(run_sandboxed(options, [&](const SandboxReport&) -> std::string {
        RETURN_IF(expect_errno("opening for writing", ::open(file.c_str(), O_WRONLY), EPERM));
        RETURN_IF(expect_errno("opening read-write", ::open(file.c_str(), O_RDWR), EPERM));
        RETURN_IF(expect_errno("creating",
                               ::open((allowed / "new").c_str(), O_RDONLY | O_CREAT, 0600), EPERM));
        RETURN_IF(expect_errno("truncating", ::truncate(file.c_str(), 0), EPERM));
        RETURN_IF(expect_errno("mkdir", ::mkdir((allowed / "dir").c_str(), 0700), EPERM));
        RETURN_IF(expect_errno("unlink", ::unlink(file.c_str()), EPERM));
        return "";
    }));
    // The file is untouched.
    CHECK(allowed.read("part") == "pool bytes");
}

TEST_CASE("no program can be executed and no process forked", "[sandbox][seccomp]") {
    SandboxOptions options;
    options.read_only_paths = {"/usr", "/bin"};
    expect_success(run_sandboxed(options, [](const SandboxReport&) -> std::string {
        char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
        RETURN_IF(expect_errno("execve", ::execve("/bin/true", argv, environ), EPERM));
        RETURN_IF(expect_errno("fork", ::fork(), EPERM));
        return "";
    }));
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
    expect_success(run_in_child([](int) -> std::string {
        int release[2];
        if (::pipe(release) != 0)
            return fmt::format("pipe: {}", std::strerror(errno));
        std::thread waiter([&release] {
            char byte = 0;
            (void)!::read(release[0], &byte, 1);
        });
        auto entered = enter_sandbox({});
        (void)!::write(release[1], "x", 1);
        waiter.join();
        if (entered)
            return "entered with a second thread running";
        if (entered.error().errno_value() != EBUSY)
            return "refused, but not with EBUSY: " + entered.error().message();
        return "";
    }));
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

    // The part's fd is in flight on the socket before the child starts; the child takes it
    // (recvmsg) only once it is sandboxed, as a worker does.
    {
        int fd = ::open(part.c_str(), O_RDWR | O_CLOEXEC);
        REQUIRE(fd >= 0);
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
        REQUIRE(::sendmsg(pair[0], &message, 0) == 1);
        ::close(fd);
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

TEST_CASE("other processes cannot be signalled (by Landlock alone: from its ABI 6)",
          "[sandbox][landlock][seccomp]") {
    const bool filter = GENERATE(true, false);
    SandboxOptions options;
    options.filter_system_calls = filter;
    expect_success(run_sandboxed(options, [filter](const SandboxReport& report) -> std::string {
        // Signal 0 checks the permission only. The filter refuses it; without the filter,
        // Landlock scopes signals from ABI 6 on, and an older kernel lets it through.
        if (!filter && report.landlock_abi < 6) {
            if (::kill(::getppid(), 0) != 0)
                return fmt::format("kill(parent, 0) failed with Landlock ABI {}: {}",
                                   report.landlock_abi, std::strerror(errno));
            return "";
        }
        return expect_errno("kill(parent, 0)", ::kill(::getppid(), 0), EPERM);
    }));
}

TEST_CASE("a worker user without a worker group is refused", "[sandbox][privileges]") {
    SandboxOptions alone;
    alone.uid = 65534;
    const ChildOutcome outcome =
        run_sandboxed(alone, [](const SandboxReport&) { return std::string("entered"); });
    CHECK(outcome.message.find("needs a worker group") != std::string::npos);
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
