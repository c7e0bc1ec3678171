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
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
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

namespace {

constexpr std::size_t kPage = 4096;

// A part file of a header page ("HEADER") and a data page, and a socket pair whose first end
// already carries a descriptor of it, as the supervisor sends one before a worker takes it.
struct PartInFlight {
    TempDir dir;
    std::string part = dir / "part";
    int pair[2] = {-1, -1};

    PartInFlight() {
        int fd = ::open(part.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(::ftruncate(fd, 2 * kPage) == 0);
        REQUIRE(::pwrite(fd, "HEADER", 6, 0) == 6);
        ::close(fd);
        REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
        fd = ::open(part.c_str(), O_RDWR | O_CLOEXEC);
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
    ~PartInFlight() {
        ::close(pair[0]);
        ::close(pair[1]);
    }
    int worker_end() const { return pair[1]; }

    // In the sandboxed child: the descriptor (recvmsg), or -1 with `failure` set.
    int receive(std::string& failure) const {
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        char byte = 0;
        iovec vector{&byte, 1};
        msghdr message{};
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        if (::recvmsg(worker_end(), &message, MSG_CMSG_CLOEXEC) != 1) {
            failure = fmt::format("recvmsg: {}", std::strerror(errno));
            return -1;
        }
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        if (header == nullptr || header->cmsg_type != SCM_RIGHTS) {
            failure = "no fd arrived";
            return -1;
        }
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
        return fd;
    }

    // In a sandboxed child (with `map_part_starts` as given), once sandboxed as a worker is:
    // takes the descriptor and runs `body` on it.
    ChildOutcome in_worker(bool map_part_starts,
                           const std::function<std::string(int)>& body) const {
        SandboxOptions options;
        options.keep_fds = {worker_end()};
        options.map_part_starts = map_part_starts;
        return run_sandboxed(options, [&](const SandboxReport&) -> std::string {
            std::string failure;
            int fd = receive(failure);
            return fd < 0 ? failure : body(fd);
        });
    }

    // The file's first page and the start of its second, as text up to the first NUL.
    std::pair<std::string, std::string> contents() const {
        std::string header(kPage, '\0');
        std::string data(kPage, '\0');
        int fd = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        REQUIRE(::pread(fd, header.data(), kPage, 0) == static_cast<ssize_t>(kPage));
        REQUIRE(::pread(fd, data.data(), kPage, kPage) == static_cast<ssize_t>(kPage));
        ::close(fd);
        return {header.c_str(), data.c_str()};
    }
};

} // namespace

TEST_CASE("a pool fd received over the supervisor's socket maps past its header, persists and "
          "unmaps",
          "[sandbox][seccomp]") {
    PartInFlight flight;
    // The child takes the descriptor only once it is sandboxed, as a worker does.
    expect_success(flight.in_worker(false, [&](int fd) -> std::string {
        // Reserve a range, then map the part's data into it, as the worker does with a pool.
        void* range = ::mmap(nullptr, 4 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (range == MAP_FAILED)
            return fmt::format("reserving: {}", std::strerror(errno));
        void* want = static_cast<char*>(range) + kPage;
        void* mapped = ::mmap(want, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                              static_cast<off_t>(kPage));
        if (mapped != want)
            return fmt::format("mapping the part: {}", std::strerror(errno));
        ::close(fd);
        std::memcpy(mapped, "persisted", 10);
        if (::msync(mapped, kPage, MS_SYNC) != 0)
            return fmt::format("msync: {}", std::strerror(errno));
        RETURN_IF(expect_errno("mprotect to executable",
                               ::mprotect(mapped, kPage, PROT_READ | PROT_EXEC), EPERM));
        if (::munmap(range, 4 * kPage) != 0)
            return fmt::format("munmap: {}", std::strerror(errno));
        return "";
    }));
    CHECK(flight.contents() == std::pair<std::string, std::string>{"HEADER", "persisted"});
}

TEST_CASE("a part descriptor cannot reach its header: no write, no shared map of the first page",
          "[sandbox][seccomp]") {
    PartInFlight flight;
    // What an exploit of the worker would try with the descriptor it was sent.
    expect_success(flight.in_worker(false, [&](int fd) -> std::string {
        constexpr char kEvil[] = "EVILHDR!";
        // The descriptor's offset is 0: write(2) would land on the header.
        RETURN_IF(expect_errno("write", ::write(fd, kEvil, 8), EFBIG));
        RETURN_IF(expect_errno("pwrite at 0", ::pwrite(fd, kEvil, 8, 0), EPERM));
        iovec vector{const_cast<char*>(kEvil), 8};
        RETURN_IF(expect_errno("writev", ::writev(fd, &vector, 1), EPERM));
        RETURN_IF(expect_errno("pwritev at 0", ::pwritev(fd, &vector, 1, 0), EPERM));
        RETURN_IF(expect_errno("lseek", ::lseek(fd, 0, SEEK_SET), EPERM));
        RETURN_IF(expect_errno("ftruncate", ::ftruncate(fd, 0), EPERM));
        RETURN_IF(expect_errno("fallocate punching the header",
                               ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 8),
                               EPERM));
        for (int shared : {MAP_SHARED, MAP_SHARED_VALIDATE}) {
            void* header = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, shared, fd, 0);
            RETURN_IF(
                expect_errno("a shared map at offset 0", header == MAP_FAILED ? -1 : 0, EPERM));
        }
        // A private map of it is allowed (a copy: writes stay in this process).
        void* copy = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (copy == MAP_FAILED)
            return fmt::format("a private map at offset 0: {}", std::strerror(errno));
        if (std::memcmp(copy, "HEADER", 6) != 0)
            return "the private map does not show the header";
        std::memcpy(copy, kEvil, 8);
        ::munmap(copy, kPage);
        return "";
    }));
    CHECK(flight.contents() == std::pair<std::string, std::string>{"HEADER", ""});
}

TEST_CASE("a worker for headerless later parts may map a part from offset 0",
          "[sandbox][seccomp]") {
    PartInFlight flight;
    expect_success(flight.in_worker(true, [&](int fd) -> std::string {
        void* start = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (start == MAP_FAILED)
            return fmt::format("a shared map at offset 0: {}", std::strerror(errno));
        std::memcpy(start, "PART-1", 6);
        ::munmap(start, kPage);
        // Still no write(2) to a file.
        RETURN_IF(expect_errno("write", ::write(fd, "x", 1), EFBIG));
        return "";
    }));
    CHECK(flight.contents().first == "PART-1");
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
