// SPDX-License-Identifier: BSD-3-Clause
#include "child_process.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace rpmem::test {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> argv_of(const std::string& program, const std::vector<std::string>& args,
                           std::vector<std::string>& storage) {
    storage.clear();
    storage.push_back(program);
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : storage)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    return argv;
}

int wait_status(int status) {
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

} // namespace

std::string built_program(const char* variable) {
    const char* path = std::getenv(variable);
    INFO("the test runs under `meson test`, which sets " << variable);
    REQUIRE(path != nullptr);
    return path;
}

Result<DaemonProcess> DaemonProcess::start(const std::string& program,
                                           const std::vector<std::string>& args) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return fail(Error::from_errno(errno, "pipe2"));
    std::vector<std::string> all = args;
    all.push_back("--port-file");
    all.push_back("/dev/fd/3");
    std::vector<std::string> storage;
    auto argv = argv_of(program, all, storage);

    pid_t pid = ::fork();
    if (pid < 0)
        return fail(Error::from_errno(errno, "fork"));
    if (pid == 0) {
        // dup2 leaves the new descriptor without FD_CLOEXEC: rpmemd inherits it as fd 3.
        if (pipe_fds[1] == 3 ? ::fcntl(3, F_SETFD, 0) < 0 : ::dup2(pipe_fds[1], 3) < 0)
            ::_exit(127);
        ::execv(program.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    DaemonProcess process(pid, 0);

    std::string text;
    auto deadline = Clock::now() + kPatience;
    while (text.find('\n') == std::string::npos) {
        pollfd p{pipe_fds[0], POLLIN, 0};
        int ready = ::poll(&p, 1, remaining_ms(deadline));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            ::close(pipe_fds[0]);
            return fail(ETIMEDOUT, "rpmemd did not report its port in time");
        }
        char buffer[64];
        ssize_t got = ::read(pipe_fds[0], buffer, sizeof(buffer));
        if (got <= 0) {
            ::close(pipe_fds[0]);
            int status = process.stop(SIGKILL);
            return fail(ECHILD, fmt::format("rpmemd exited with status {} before listening "
                                            "(its stderr is above)",
                                            status));
        }
        text.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(pipe_fds[0]);
    process.port_ = static_cast<std::uint16_t>(std::stoul(text));
    return process;
}

DaemonProcess::DaemonProcess(DaemonProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1))
    , port_(other.port_) {}

DaemonProcess::~DaemonProcess() {
    if (pid_ > 0)
        (void)stop(SIGKILL);
}

int DaemonProcess::stop(int signal) {
    if (pid_ <= 0)
        return -1;
    ::kill(pid_, signal);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return wait_status(status);
}

Completed run_program(const std::string& program, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& environment) {
    int out_fds[2];
    int err_fds[2];
    REQUIRE(::pipe2(out_fds, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err_fds, O_CLOEXEC) == 0);
    std::vector<std::string> storage;
    auto argv = argv_of(program, args, storage);
    std::vector<std::string> env_storage;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry(*e);
        if (!environment.contains(entry.substr(0, entry.find('='))))
            env_storage.push_back(entry);
    }
    for (const auto& [name, value] : environment)
        env_storage.push_back(name + "=" + value);
    std::vector<char*> envp;
    for (auto& entry : env_storage)
        envp.push_back(entry.data());
    envp.push_back(nullptr);

    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (::dup2(out_fds[1], 1) < 0 || ::dup2(err_fds[1], 2) < 0)
            ::_exit(127);
        ::execve(program.c_str(), argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(out_fds[1]);
    ::close(err_fds[1]);

    Completed completed;
    auto deadline = Clock::now() + kPatience;
    pollfd fds[2] = {{out_fds[0], POLLIN, 0}, {err_fds[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        int ready = ::poll(fds, 2, remaining_ms(deadline));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            ::kill(pid, SIGKILL);
            FAIL_CHECK(program << " did not finish in time");
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            char buffer[4096];
            ssize_t got = ::read(fds[i].fd, buffer, sizeof(buffer));
            if (got <= 0) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
                continue;
            }
            (i == 0 ? completed.out : completed.err).append(buffer, static_cast<std::size_t>(got));
        }
    }
    for (auto& p : fds)
        if (p.fd >= 0)
            ::close(p.fd);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    completed.status = wait_status(status);
    return completed;
}

} // namespace rpmem::test
