// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/worker/sandbox.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rpmem::daemon {

namespace {

// ---------------------------------------------------------------------------------------------
// Landlock. Debian 12's <linux/landlock.h> (linux-libc-dev 6.1) stops at ABI 2, so the parts of
// the UAPI from later ABIs are spelt here; the kernel takes the structure by size, so the
// larger one is accepted by any kernel that knows its fields.

struct RulesetAttr {
    std::uint64_t handled_access_fs = 0;
    std::uint64_t handled_access_net = 0; // ABI 4
    std::uint64_t scoped = 0;             // ABI 6
};

constexpr std::uint64_t kAccessFsTruncate = 1ULL << 14;       // ABI 3
constexpr std::uint64_t kAccessFsIoctlDev = 1ULL << 15;       // ABI 5
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0; // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;             // ABI 6

// Every file system right of ABI 1 (EXECUTE through MAKE_SYM).
constexpr std::uint64_t kAccessFsAbi1 = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;
constexpr std::uint64_t kAccessFsRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
// The rights that apply to a file, not only to a directory (the kernel refuses others on a file).
constexpr std::uint64_t kAccessFsFileRights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
    kAccessFsTruncate | kAccessFsIoctlDev;

std::uint64_t handled_fs_rights(int abi) {
    std::uint64_t rights = kAccessFsAbi1;
    if (abi >= 2)
        rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        rights |= kAccessFsTruncate;
    if (abi >= 5)
        rights |= kAccessFsIoctlDev;
    return rights;
}

// An fd closed when it goes out of scope (enter_sandbox's own, short-lived descriptors).
class ScopedFd {
public:
    explicit ScopedFd(int fd) noexcept
        : fd_(fd) {}
    ~ScopedFd() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    ScopedFd(const ScopedFd&) = delete;
    ScopedFd& operator=(const ScopedFd&) = delete;
    int get() const noexcept { return fd_; }

private:
    int fd_;
};

int landlock_abi_version(int& error) {
    long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    error = abi < 0 ? errno : 0;
    return abi < 0 ? 0 : static_cast<int>(abi);
}

Result<void> add_read_only_path(int ruleset, const std::string& path, std::uint64_t handled) {
    ScopedFd parent(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (parent.get() < 0)
        return fail(Error::from_errno(errno, fmt::format("opening read-only path {}", path)));
    struct stat status {};
    if (::fstat(parent.get(), &status) != 0)
        return fail(Error::from_errno(errno, fmt::format("examining read-only path {}", path)));
    std::uint64_t allowed = kAccessFsRead & handled;
    if (!S_ISDIR(status.st_mode))
        allowed &= kAccessFsFileRights;
    landlock_path_beneath_attr rule{};
    rule.allowed_access = allowed;
    rule.parent_fd = parent.get();
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        return fail(Error::from_errno(errno, fmt::format("allowing reads beneath {}", path)));
    return {};
}

Result<void> restrict_file_system(int abi, const std::vector<std::string>& read_only_paths) {
    RulesetAttr attributes;
    attributes.handled_access_fs = handled_fs_rights(abi);
    // Signals and abstract unix sockets reach only processes in this domain (or nested ones):
    // a worker can neither signal the supervisor or another worker, nor connect to a service
    // listening on an abstract name. (Landlock has no right for connecting to a path-named
    // socket; the seccomp filter keeps the worker from making sockets of that family.)
    if (abi >= 6)
        attributes.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    // Each ABI's kernel takes the prefix of the structure it knows.
    std::size_t size = abi >= 6   ? sizeof(RulesetAttr)
                       : abi >= 4 ? offsetof(RulesetAttr, scoped)
                                  : offsetof(RulesetAttr, handled_access_net);
    ScopedFd ruleset(
        static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, size, 0U)));
    if (ruleset.get() < 0)
        return fail(Error::from_errno(errno, "creating the Landlock ruleset"));
    for (const std::string& path : read_only_paths) {
        if (auto added = add_read_only_path(ruleset.get(), path, attributes.handled_access_fs);
            !added)
            return added;
    }
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0U) != 0)
        return fail(Error::from_errno(errno, "enforcing the Landlock ruleset"));
    return {};
}

// ---------------------------------------------------------------------------------------------
// Threads, privileges, descriptors.

Result<void> require_single_thread() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("Threads:", 0) != 0)
            continue;
        unsigned long threads = 0;
        const std::size_t digits = line.find_first_not_of(" \t", 8);
        if (digits == std::string::npos ||
            std::from_chars(line.data() + digits, line.data() + line.size(), threads).ec !=
                std::errc())
            break;
        if (threads != 1)
            return fail(EBUSY, fmt::format("the process has {} threads; the sandbox must be "
                                           "entered before any thread is started",
                                           threads));
        return {};
    }
    return fail(ENOENT, "cannot count this process's threads in /proc/self/status");
}

Result<bool> drop_privileges(const SandboxOptions& options) {
    if (options.uid.has_value() != options.gid.has_value())
        return fail(EINVAL, "a worker user needs a worker group and vice versa (a user alone "
                            "would keep group root)");
    if (!options.uid)
        return false;
    const uid_t uid = *options.uid;
    const gid_t gid = *options.gid;
    if (::geteuid() != 0) {
        if (::geteuid() == uid && ::getuid() == uid && ::getegid() == gid && ::getgid() == gid)
            return false;
        return fail(EPERM,
                    fmt::format("cannot switch to uid {} gid {} as uid {}", uid, gid, ::geteuid()));
    }
    if (uid == 0 || gid == 0)
        return fail(EINVAL, "the worker user and group must not be root");
    // Group first: once the uid is gone, so is the right to change groups.
    if (::setgroups(1, &gid) != 0)
        return fail(
            Error::from_errno(errno, fmt::format("setting supplementary groups to {}", gid)));
    if (::setresgid(gid, gid, gid) != 0)
        return fail(Error::from_errno(errno, fmt::format("switching to gid {}", gid)));
    if (::setresuid(uid, uid, uid) != 0)
        return fail(Error::from_errno(errno, fmt::format("switching to uid {}", uid)));
    // Trust, but verify: every id is the new one and root cannot be regained.
    uid_t ruid = 0, euid = 0, suid = 0;
    gid_t rgid = 0, egid = 0, sgid = 0;
    if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0 ||
        ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid)
        return fail(EPERM, fmt::format("the switch to uid {} gid {} did not take", uid, gid));
    if (::setuid(0) == 0 || ::setgid(0) == 0)
        return fail(EPERM, fmt::format("uid {} gid {} could regain root", uid, gid));
    return true;
}

Result<void> close_other_fds(std::vector<int> keep) {
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
    for (int fd : keep) {
        if (fd < 0 || ::fcntl(fd, F_GETFD) < 0)
            return fail(EBADF, fmt::format("descriptor {} to keep is not open", fd));
    }
    // 0, 1 and 2 stay taken: a standard stream not kept is pointed at /dev/null.
    const bool keeps_all_std =
        std::count_if(keep.begin(), keep.end(), [](int fd) { return fd <= 2; }) == 3;
    if (!keeps_all_std) {
        ScopedFd null_fd(::open("/dev/null", O_RDWR | O_CLOEXEC));
        if (null_fd.get() < 0)
            return fail(Error::from_errno(errno, "opening /dev/null"));
        for (int fd = 0; fd <= 2; ++fd) {
            if (std::find(keep.begin(), keep.end(), fd) == keep.end() &&
                ::dup2(null_fd.get(), fd) < 0)
                return fail(
                    Error::from_errno(errno, fmt::format("pointing fd {} at /dev/null", fd)));
        }
    }
    unsigned first = 3;
    for (int fd : keep) {
        if (fd < 3)
            continue;
        if (static_cast<unsigned>(fd) > first &&
            ::close_range(first, static_cast<unsigned>(fd) - 1, 0) != 0)
            return fail(Error::from_errno(errno, "closing descriptors"));
        first = static_cast<unsigned>(fd) + 1;
    }
    if (::close_range(first, ~0U, 0) != 0)
        return fail(Error::from_errno(errno, "closing descriptors"));
    return {};
}

// ---------------------------------------------------------------------------------------------
// seccomp

// The filter context, released when it goes out of scope (the loaded filter stays).
struct FilterDeleter {
    void operator()(void* context) const noexcept { seccomp_release(context); }
};
using FilterPtr = std::unique_ptr<void, FilterDeleter>;

// One allowed system call and who needs it (the list below is the evidence, trimmed).
struct Allowed {
    int number;
    const char* name;
};

#define RPMEM_ALLOW(call)                                                                          \
    Allowed {                                                                                      \
        SCMP_SYS(call), #call                                                                      \
    }

// Allowed with any arguments. Grouped by who needs them. The evidence: strace -f of rpmemd
// (rpmemd_control, rpmemd_vanish), of rpmem-bench persist (an in-process target, tcp) and of
// fabric_sandboxed_target (tcp and sockets behind this very filter), ASan+UBSan builds: the
// calls of the session thread from fi_fabric on, and of the responder threads. Calls seen
// only before that point (provider loading by dlopen, fi_getinfo's netlink dump and
// SIOCETHTOOL ioctls, config and pool files, flock, fallocate, TLS) are not here.
constexpr Allowed kAllowed[] = {
    // Memory: thread stacks, ASan's allocator and shadow (seen); glibc malloc's arenas in a
    // build without ASan (brk, mremap: not seen under ASan, which replaces malloc); the pool
    // parts the worker maps and persists when they are not pmem (msync).
    // mmap and mprotect are filtered below.
    RPMEM_ALLOW(brk),
    RPMEM_ALLOW(munmap),
    RPMEM_ALLOW(mremap),
    RPMEM_ALLOW(madvise),
    RPMEM_ALLOW(msync),
    // Threads: std::thread (glibc's pthread_create and thread start: rseq, set_robust_list,
    // sigaltstack from ASan, sched_getaffinity), the responder pinning itself to a CPU
    // (sched_setaffinity), libfabric's locks and the sockets provider's progress threads
    // (futex), spinning waits (sched_yield). clone is filtered below.
    RPMEM_ALLOW(futex),
    RPMEM_ALLOW(set_robust_list),
    RPMEM_ALLOW(rseq),
    RPMEM_ALLOW(sched_yield),
    RPMEM_ALLOW(getrusage), // the wait controller counts its thread's preemptions
    RPMEM_ALLOW(sched_getaffinity),
    RPMEM_ALLOW(sched_setaffinity),
    RPMEM_ALLOW(gettid),
    RPMEM_ALLOW(getpid), // spdlog's pattern, sanitizer runtimes
    RPMEM_ALLOW(exit),
    RPMEM_ALLOW(exit_group),
    RPMEM_ALLOW(restart_syscall), // seen in the responder after an interrupted poll
    // Time: clock_gettime normally stays in the vDSO; sleeps of deadline-bounded waits.
    RPMEM_ALLOW(clock_gettime),
    RPMEM_ALLOW(clock_nanosleep),
    RPMEM_ALLOW(nanosleep),
    // inject-reply-delay's timer (fabric_target.cpp).
    RPMEM_ALLOW(timerfd_create),
    RPMEM_ALLOW(timerfd_settime),
    RPMEM_ALLOW(getrandom), // libfabric's connection keys
    // Signals: a masked thread start (rt_sigprocmask, seen), abort() and ASan's reports
    // (rt_sigaction, rt_sigreturn; tgkill is filtered below).
    RPMEM_ALLOW(rt_sigaction),
    RPMEM_ALLOW(rt_sigprocmask),
    RPMEM_ALLOW(rt_sigreturn),
    RPMEM_ALLOW(sigaltstack),
    // Descriptors: stderr (spdlog), libfabric's signalling socketpairs and epoll sets (its
    // ofi_epoll uses the old epoll_create), the sanitizers' probe of readable memory (a pipe
    // written to and closed: pipe2, write, close), waits on the CQ (poll, epoll_wait).
    RPMEM_ALLOW(read),
    RPMEM_ALLOW(write),
    RPMEM_ALLOW(close),
    RPMEM_ALLOW(fcntl),      // O_NONBLOCK on every socket libfabric makes
    RPMEM_ALLOW(fstat),      // ASan's internal_fstat (a raw system call)
    RPMEM_ALLOW(newfstatat), // glibc's fstat
    RPMEM_ALLOW(pipe2),
    RPMEM_ALLOW(poll),
    RPMEM_ALLOW(epoll_create),
    RPMEM_ALLOW(epoll_create1),
    RPMEM_ALLOW(epoll_ctl),
    RPMEM_ALLOW(epoll_wait),
    // Sockets: the passive endpoint (bind to port 0, listen, getsockname), accepted lanes
    // (accept in the responder; getpeername, setsockopt TCP_NODELAY, stream I/O by
    // sendto/recvfrom/sendmsg, shutdown at close), the worker's unix socket to the supervisor
    // (recvmsg with SCM_RIGHTS for pool part fds, sendmsg). socket and socketpair are filtered
    // below.
    RPMEM_ALLOW(bind),
    RPMEM_ALLOW(listen),
    RPMEM_ALLOW(accept),
    RPMEM_ALLOW(getsockname),
    RPMEM_ALLOW(getpeername),
    RPMEM_ALLOW(setsockopt),
    RPMEM_ALLOW(getsockopt),
    RPMEM_ALLOW(shutdown),
    // The data ports' doorkeeper (rpmemd/lane_gate.h) lists /proc/self/fd to find connections
    // the provider holds without a lane binding.
    RPMEM_ALLOW(getdents64),
    RPMEM_ALLOW(sendto),
    RPMEM_ALLOW(recvfrom),
    RPMEM_ALLOW(sendmsg),
    RPMEM_ALLOW(recvmsg),
    // Reading the process's own identity (glibc and libraries ask for geteuid; the tests
    // check the drop). Changing it is not allowed: no set*id call is here.
    RPMEM_ALLOW(getuid),
    RPMEM_ALLOW(geteuid),
    RPMEM_ALLOW(getgid),
    RPMEM_ALLOW(getegid),
    RPMEM_ALLOW(getresuid),
    RPMEM_ALLOW(getresgid),
    RPMEM_ALLOW(getgroups),
    // An ASan report names the binary (/proc/self/exe).
    RPMEM_ALLOW(readlink),
};

#undef RPMEM_ALLOW

// A condition on argument `index` (libseccomp's SCMP_A* macros are C compound literals, which
// ISO C++ lacks).
scmp_arg_cmp masked_equal(unsigned index, std::uint64_t mask, std::uint64_t value) {
    return scmp_arg_cmp{index, SCMP_CMP_MASKED_EQ, mask, value};
}
// An int argument equals `value`; only its low 32 bits count (the upper half of the register is
// not defined for an int).
scmp_arg_cmp int_equal(unsigned index, int value) {
    return masked_equal(index, 0xffffffffU, static_cast<std::uint32_t>(value));
}

Result<void> add_rule(scmp_filter_ctx filter, std::uint32_t action, int number, const char* name,
                      std::initializer_list<scmp_arg_cmp> conditions = {}) {
    int added = seccomp_rule_add_array(
        filter, action, number, static_cast<unsigned>(conditions.size()), conditions.begin());
    if (added != 0)
        return fail(Error::from_errno(-added, fmt::format("allowing system call {}", name)));
    return {};
}

Result<void> install_system_call_filter(bool map_part_starts) {
    // The default is an error, not SCMP_ACT_KILL_PROCESS: a hostile call is refused either way,
    // and a benign call that is missing from the list (a new glibc or libfabric version, an
    // error path never measured) fails loudly with EPERM in a log line instead of killing the
    // worker without a word in the middle of a client's session.
    FilterPtr filter(seccomp_init(SCMP_ACT_ERRNO(EPERM)));
    if (!filter)
        return fail(ENOMEM, "creating the system call filter");
    // TSYNC: the filter covers every thread of the process, not just the caller. SYSRAWRC:
    // failures return the kernel's errno, not a libseccomp summary.
    if (int set = seccomp_attr_set(filter.get(), SCMP_FLTATR_CTL_TSYNC, 1); set != 0)
        return fail(Error::from_errno(-set, "synchronising the system call filter"));
    if (int set = seccomp_attr_set(filter.get(), SCMP_FLTATR_API_SYSRAWRC, 1); set != 0)
        return fail(Error::from_errno(-set, "configuring the system call filter"));

    constexpr std::uint32_t allow = SCMP_ACT_ALLOW;
    for (const Allowed& call : kAllowed) {
        if (auto added = add_rule(filter.get(), allow, call.number, call.name); !added)
            return added;
    }

    // Threads only: clone without CLONE_THREAD would be a new process (fork, posix_spawn).
    // clone3 takes its flags in memory seccomp cannot read, so it says ENOSYS and glibc falls
    // back to clone.
    if (auto added = add_rule(filter.get(), allow, SCMP_SYS(clone), "clone",
                              {masked_equal(0, CLONE_THREAD, CLONE_THREAD)});
        !added)
        return added;
    if (auto added = add_rule(filter.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3");
        !added)
        return added;

    // No new executable memory: the code the worker runs is mapped before the sandbox.
    const scmp_arg_cmp not_executable = masked_equal(2, PROT_EXEC, 0);
    if (auto added =
            add_rule(filter.get(), allow, SCMP_SYS(mprotect), "mprotect", {not_executable});
        !added)
        return added;
    if (map_part_starts) {
        if (auto added = add_rule(filter.get(), allow, SCMP_SYS(mmap), "mmap", {not_executable});
            !added)
            return added;
    } else {
        // Nor a header made writable: a shared mapping of a file starts at or past the header
        // page. Private mappings (copy on write) and anonymous ones go anywhere. mremap cannot
        // move a mapping to a lower file offset; remap_file_pages is not allowed.
        for (scmp_arg_cmp where :
             {masked_equal(3, MAP_SHARED, 0), masked_equal(3, MAP_ANONYMOUS, MAP_ANONYMOUS),
              scmp_arg_cmp{5, SCMP_CMP_GE, kHeaderGuard, 0}}) {
            if (auto added =
                    add_rule(filter.get(), allow, SCMP_SYS(mmap), "mmap", {not_executable, where});
                !added)
                return added;
        }
    }

    // Opening for reading only, even where Landlock is unavailable: no write access, no
    // creating, truncating or appending. Landlock decides which paths can be read at all.
    constexpr std::uint64_t kTmpFile = O_TMPFILE & ~O_DIRECTORY;
    constexpr std::uint64_t kWriting = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | kTmpFile;
    if (auto added = add_rule(filter.get(), allow, SCMP_SYS(openat), "openat",
                              {masked_equal(2, kWriting, 0)});
        !added)
        return added;

    // Socket pairs: libfabric signals its own waits through AF_UNIX socket pairs (fi_fabric,
    // fi_domain, each CQ and EQ); a pair reaches nothing outside the process.
    if (auto added = add_rule(filter.get(), allow, SCMP_SYS(socketpair), "socketpair",
                              {int_equal(0, AF_UNIX)});
        !added)
        return added;
    // Sockets of the families the data path uses: IP for the fabric, netlink for a provider's
    // interface lookup (getifaddrs in fi_getinfo, should one run after the sandbox). Not
    // AF_PACKET, not AF_UNIX: no path-named or abstract service on this host is reachable.
    for (int family : {AF_INET, AF_INET6, AF_NETLINK}) {
        if (auto added =
                add_rule(filter.get(), allow, SCMP_SYS(socket), "socket", {int_equal(0, family)});
            !added)
            return added;
    }

    // Signals to this process only (abort(), ASan's reports): the pid cannot change, as the
    // worker cannot fork.
    if (auto added =
            add_rule(filter.get(), allow, SCMP_SYS(tgkill), "tgkill", {int_equal(0, ::getpid())});
        !added)
        return added;

    // prctl only to read the sandbox's own state back (a worker reporting it, the tests).
    for (int option : {PR_GET_NO_NEW_PRIVS, PR_GET_DUMPABLE, PR_CAPBSET_READ}) {
        if (auto added =
                add_rule(filter.get(), allow, SCMP_SYS(prctl), "prctl", {int_equal(0, option)});
            !added)
            return added;
    }

    if (int loaded = seccomp_load(filter.get()); loaded != 0)
        return fail(Error::from_errno(-loaded, "loading the system call filter"));
    return {};
}

} // namespace

Result<SandboxReport> enter_sandbox(const SandboxOptions& options) {
    SandboxReport report;
    if (auto single = require_single_thread(); !single)
        return fail(std::move(single.error()).add_context("entering the sandbox"));
    // No execve from here on can gain privileges (set-id bits, file capabilities); it is also
    // what lets an unprivileged process install Landlock rulesets and seccomp filters.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return fail(Error::from_errno(errno, "entering the sandbox: setting no_new_privs"));
    // Not dumpable: no other process of the same uid (another worker) may ptrace this one or
    // read its memory through /proc/PID/mem or process_vm_readv.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return fail(Error::from_errno(errno, "entering the sandbox: clearing dumpable"));

    // No capability to regain, by this process or by anything it could execute: an empty
    // bounding set (dropping needs CAP_SETPCAP, which only a root-started worker has) and no
    // ambient capabilities.
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
        return fail(
            Error::from_errno(errno, "entering the sandbox: clearing ambient capabilities"));
    if (::geteuid() == 0) {
        for (int capability = 0; ::prctl(PR_CAPBSET_READ, capability, 0, 0, 0) >= 0; ++capability) {
            if (::prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0)
                return fail(Error::from_errno(
                    errno, fmt::format("entering the sandbox: dropping capability {} from the "
                                       "bounding set",
                                       capability)));
        }
        report.emptied_bounding_set = true;
    }

    const pid_t supervisor = ::getppid();
    auto dropped = drop_privileges(options);
    if (!dropped)
        return fail(std::move(dropped.error()).add_context("entering the sandbox"));
    report.dropped_privileges = *dropped;
    // A change of credentials clears the parent-death signal: arm it again, or a killed
    // supervisor leaves this worker holding its pool files (and their locks) for a restarted one.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return fail(
            Error::from_errno(errno, "entering the sandbox: setting the parent-death signal"));
    if (::getppid() != supervisor)
        return fail(ESRCH, "entering the sandbox: the supervisor ended while the worker dropped "
                           "its privileges");

    // No write(2) reaches a regular file (a pool part's header above all; sockets, pipes and
    // stderr are not files): the kernel checks the size limit on every write, before seccomp
    // could be asked which descriptor it is. EFBIG, not a fatal SIGXFSZ.
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit no_file_writes{0, 0};
    if (::setrlimit(RLIMIT_FSIZE, &no_file_writes) != 0)
        return fail(Error::from_errno(errno, "entering the sandbox: limiting file writes"));

    if (auto closed = close_other_fds(options.keep_fds); !closed)
        return fail(std::move(closed.error()).add_context("entering the sandbox"));

    int landlock_error = 0;
    report.landlock_abi = landlock_abi_version(landlock_error);
    if (report.landlock_abi == 0) {
        // ENOSYS: a kernel built without Landlock; EOPNOTSUPP: not enabled at boot.
        report.landlock_note = fmt::format("unavailable: {}", std::strerror(landlock_error));
    } else if (auto restricted = restrict_file_system(report.landlock_abi, options.read_only_paths);
               !restricted) {
        return fail(std::move(restricted.error()).add_context("entering the sandbox"));
    }

    if (options.filter_system_calls) {
        if (auto filtered = install_system_call_filter(options.map_part_starts); !filtered)
            return fail(std::move(filtered.error()).add_context("entering the sandbox"));
        report.seccomp = true;
    }
    return report;
}

namespace {} // namespace

} // namespace rpmem::daemon
