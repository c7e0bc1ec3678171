// SPDX-License-Identifier: BSD-3-Clause
#include "netns_pair.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "precondition.h"
#include "process.h"

namespace rpmem::test::faults {

namespace {

constexpr const char* kPrefix = "rpmf-";

// The janitor's work, also used for the namespaces of dead runs: kill what is left inside,
// then delete. Quiet: a namespace may already be gone.
std::string cleanup_script(const std::vector<std::string>& names) {
    std::string script;
    for (const std::string& name : names)
        script += "for p in $(ip netns pids " + name + " 2>/dev/null); do kill -9 $p; done; " +
                  "ip netns del " + name + " 2>/dev/null; ";
    script += "exit 0";
    return script;
}

void must(const std::vector<std::string>& argv) {
    const RunResult result = run(argv, {}, std::chrono::seconds(20));
    if (result.status != 0) {
        std::string command;
        for (const std::string& arg : argv)
            command += arg + " ";
        throw std::runtime_error("setting up the namespaces: " + command + "failed (status " +
                                 std::to_string(result.status) + "): " + result.output());
    }
}

// Namespaces named by this prefix whose test process is gone (a run that crashed and whose
// janitor died too).
void remove_stale_namespaces() {
    const RunResult listed = run({"ip", "netns", "list"}, {}, std::chrono::seconds(20));
    std::istringstream lines(listed.out);
    std::string line;
    std::vector<std::string> stale;
    while (std::getline(lines, line)) {
        const std::string name = line.substr(0, line.find(' '));
        if (name.rfind(kPrefix, 0) != 0)
            continue;
        const std::string rest = name.substr(std::strlen(kPrefix));
        pid_t owner = 0;
        try {
            owner = static_cast<pid_t>(std::stol(rest));
        } catch (const std::exception&) {
            continue; // not one of ours
        }
        if (owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH)
            stale.push_back(name);
    }
    if (!stale.empty())
        (void)run({"sh", "-c", cleanup_script(stale)}, {}, std::chrono::seconds(30));
}

} // namespace

std::optional<std::string> NetnsPair::missing() {
    if (auto no_root = missing_root())
        return "the fault tests make network namespaces and nftables rules: " + *no_root;
    const std::string probe = kPrefix + std::to_string(::getpid()) + "-probe";
    const RunResult added = run({"ip", "netns", "add", probe}, {}, std::chrono::seconds(20));
    if (added.status != 0)
        return "`ip netns add` does not work here (status " + std::to_string(added.status) +
               "): " + added.output();
    const RunResult nft =
        run({"ip", "netns", "exec", probe, "nft", "list", "ruleset"}, {}, std::chrono::seconds(20));
    (void)run({"ip", "netns", "del", probe}, {}, std::chrono::seconds(20));
    if (nft.status != 0)
        return "nftables does not work in a network namespace (status " +
               std::to_string(nft.status) + "): " + nft.output();
    return std::nullopt;
}

NetnsPair::NetnsPair() {
    remove_stale_namespaces();
    std::random_device random;
    std::ostringstream name;
    name << kPrefix << ::getpid() << "-" << std::hex << (random() & 0xFFFFFF);
    initiator_ = name.str() + "-i";
    target_ = name.str() + "-t";

    // The janitor first, so that whatever happens from here on is undone.
    const std::string script = "cat <&3 >/dev/null; " + cleanup_script({initiator_, target_});
    const char* const janitor_argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    janitor_ = ::fork();
    if (janitor_ == 0) {
        // Only async-signal-safe calls from here to the exec.
        ::setsid();
        ::dup2(null_fd, STDIN_FILENO);
        ::dup2(null_fd, STDOUT_FILENO);
        ::dup2(null_fd, STDERR_FILENO);
        ::dup2(ends[0], 3);
        ::fcntl(3, F_SETFD, 0); // dup2 onto itself keeps O_CLOEXEC
        ::syscall(SYS_close_range, 4U, ~0U, 0U);
        ::execv(janitor_argv[0], const_cast<char* const*>(janitor_argv));
        ::_exit(127);
    }
    const int fork_error = errno;
    ::close(ends[0]);
    ::close(null_fd);
    if (janitor_ < 0) {
        ::close(ends[1]);
        throw std::runtime_error(std::string("fork: ") + std::strerror(fork_error));
    }
    janitor_pipe_ = ends[1];

    try {
        const std::string veth_initiator = "rpmf-i";
        must({"ip", "netns", "add", initiator_});
        must({"ip", "netns", "add", target_});
        must({"ip", "-n", initiator_, "link", "set", "lo", "up"});
        must({"ip", "-n", target_, "link", "set", "lo", "up"});
        must({"ip", "-n", initiator_, "link", "add", veth_initiator, "type", "veth", "peer", "name",
              kTargetInterface, "netns", target_});
        must({"ip", "-n", initiator_, "addr", "add", std::string(kInitiatorAddress) + "/24", "dev",
              veth_initiator});
        must({"ip", "-n", target_, "addr", "add", std::string(kTargetAddress) + "/24", "dev",
              kTargetInterface});
        must({"ip", "-n", initiator_, "link", "set", veth_initiator, "up"});
        must({"ip", "-n", target_, "link", "set", kTargetInterface, "up"});
    } catch (...) {
        remove_now();
        throw;
    }
}

NetnsPair::~NetnsPair() {
    remove_now();
}

void NetnsPair::remove_now() noexcept {
    if (janitor_pipe_ < 0)
        return;
    ::close(janitor_pipe_); // the janitor's signal
    janitor_pipe_ = -1;
    // Wait for it (bounded: it only runs `ip`); a pidfd turns readable when it exits.
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, janitor_, 0));
    if (pidfd >= 0) {
        pollfd entry{pidfd, POLLIN, 0};
        (void)::poll(&entry, 1, 30000);
        ::close(pidfd);
    }
    int status = 0;
    if (::waitpid(janitor_, &status, WNOHANG) == 0) {
        ::kill(janitor_, SIGKILL);
        (void)::waitpid(janitor_, &status, 0);
    }
    janitor_ = -1;
}

std::vector<std::string> NetnsPair::in_initiator(const std::vector<std::string>& argv) const {
    std::vector<std::string> full{"ip", "netns", "exec", initiator_};
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
}

std::vector<std::string> NetnsPair::in_target(const std::vector<std::string>& argv) const {
    std::vector<std::string> full{"ip", "netns", "exec", target_};
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
}

} // namespace rpmem::test::faults
