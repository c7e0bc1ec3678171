// SPDX-License-Identifier: BSD-3-Clause
#include "process.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "temp_dir.h"

extern char** environ;

namespace rpmem::test {

namespace {

int status_of(int raw) {
    if (WIFEXITED(raw))
        return WEXITSTATUS(raw);
    if (WIFSIGNALED(raw))
        return 128 + WTERMSIG(raw);
    return -1;
}

} // namespace

Process Process::spawn(const std::vector<std::string>& argv, const EnvironmentChanges& environment,
                       const std::optional<std::filesystem::path>& log) {
    if (argv.empty())
        throw std::invalid_argument("spawn: empty argv");
    // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
    std::vector<std::string> env_strings;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        std::string_view text(*entry);
        std::string name(text.substr(0, text.find('=')));
        if (!environment.contains(name))
            env_strings.emplace_back(text);
    }
    for (const auto& [name, value] : environment)
        if (value)
            env_strings.push_back(name + "=" + *value);
    std::vector<char*> envp;
    for (auto& entry : env_strings)
        envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = argv;
    std::vector<char*> arg_pointers;
    for (auto& arg : args)
        arg_pointers.push_back(arg.data());
    arg_pointers.push_back(nullptr);

    int log_fd = -1;
    if (log) {
        log_fd = ::open(log->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log_fd < 0)
            throw std::runtime_error("opening " + log->string() + ": " + std::strerror(errno));
    }
    pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        if (log_fd >= 0) {
            ::dup2(log_fd, STDOUT_FILENO);
            ::dup2(log_fd, STDERR_FILENO);
        }
        ::execvpe(arg_pointers[0], arg_pointers.data(), envp.data());
        ::_exit(127);
    }
    if (log_fd >= 0)
        ::close(log_fd);
    return Process(pid);
}

Process::Process(Process&& other) noexcept
    : pid_(other.pid_) {
    other.pid_ = -1;
}

Process& Process::operator=(Process&& other) noexcept {
    if (this != &other) {
        this->~Process();
        pid_ = other.pid_;
        other.pid_ = -1;
    }
    return *this;
}

Process::~Process() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int raw = 0;
        ::waitpid(pid_, &raw, 0);
        pid_ = -1;
    }
}

void Process::signal(int number) const {
    if (pid_ > 0)
        ::kill(pid_, number);
}

std::optional<int> Process::wait_for(std::chrono::milliseconds timeout) {
    if (pid_ <= 0)
        throw std::logic_error("wait_for: no child");
    // A pidfd becomes readable when the child exits: poll() on it is a wait with a deadline.
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd < 0)
        throw std::runtime_error(std::string("pidfd_open: ") + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        int raw = 0;
        pid_t done = ::waitpid(pid_, &raw, WNOHANG);
        if (done == pid_) {
            ::close(pidfd);
            pid_ = -1;
            return status_of(raw);
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (done < 0 || left.count() <= 0) {
            ::close(pidfd);
            if (done < 0)
                throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
            return std::nullopt;
        }
        pollfd entry{pidfd, POLLIN, 0};
        ::poll(&entry, 1, static_cast<int>(left.count()));
    }
}

RunResult run(const std::vector<std::string>& argv, const EnvironmentChanges& environment,
              std::chrono::milliseconds timeout) {
    TempDir scratch("rpmem-run");
    const auto log = scratch / "output";
    Process child = Process::spawn(argv, environment, log);
    RunResult result;
    auto status = child.wait_for(timeout);
    result.status = status ? *status : -1;
    if (!status)
        child.signal(SIGKILL);
    std::ifstream in(log);
    std::ostringstream text;
    text << in.rdbuf();
    result.output = text.str();
    return result;
}

std::string required_environment(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0')
        throw std::runtime_error(std::string("the test needs ") + name + " (meson sets it)");
    return value;
}

} // namespace rpmem::test
