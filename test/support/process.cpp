// SPDX-License-Identifier: BSD-3-Clause
#include "process.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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

namespace {

// Forks and execs; the child's stdout goes to `stdout_target` and its stderr to `stderr_target`
// when those are >= 0; it runs in `directory` when that is not empty.
pid_t start_child(const std::vector<std::string>& argv, const EnvironmentChanges& environment,
                  int stdout_target, int stderr_target, int close_in_child,
                  const std::filesystem::path& directory = {}) {
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

    pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        if (close_in_child >= 0)
            ::close(close_in_child);
        if (stdout_target >= 0)
            ::dup2(stdout_target, STDOUT_FILENO);
        if (stderr_target >= 0)
            ::dup2(stderr_target, STDERR_FILENO);
        if (!directory.empty() && ::chdir(directory.c_str()) != 0)
            ::_exit(126);
        ::execvpe(arg_pointers[0], arg_pointers.data(), envp.data());
        ::_exit(127);
    }
    return pid;
}

int open_log(const std::optional<std::filesystem::path>& log) {
    if (!log)
        return -1;
    int fd = ::open(log->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("opening " + log->string() + ": " + std::strerror(errno));
    return fd;
}

} // namespace

Process Process::spawn(const std::vector<std::string>& argv, const EnvironmentChanges& environment,
                       const std::optional<std::filesystem::path>& log) {
    const int log_fd = open_log(log);
    pid_t pid = start_child(argv, environment, log_fd, log_fd, -1);
    if (log_fd >= 0)
        ::close(log_fd);
    return Process(pid);
}

Process Process::spawn(const std::vector<std::string>& argv, const EnvironmentChanges& environment,
                       const std::filesystem::path& stdout_log,
                       const std::filesystem::path& stderr_log) {
    const int out_fd = open_log(stdout_log);
    const int err_fd = open_log(stderr_log);
    pid_t pid = start_child(argv, environment, out_fd, err_fd, -1);
    ::close(out_fd);
    ::close(err_fd);
    return Process(pid);
}

Process Process::spawn_piped(const std::vector<std::string>& argv,
                             const EnvironmentChanges& environment, int& stdout_fd,
                             const std::optional<std::filesystem::path>& log,
                             const std::filesystem::path& working_directory) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const int log_fd = open_log(log);
    pid_t pid = start_child(argv, environment, pipe_fds[1], log_fd, pipe_fds[0], working_directory);
    ::close(pipe_fds[1]);
    if (log_fd >= 0)
        ::close(log_fd);
    stdout_fd = pipe_fds[0];
    return Process(pid);
}

std::optional<std::string> read_line(int fd, std::chrono::steady_clock::time_point deadline) {
    std::string line;
    for (;;) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return std::nullopt;
        pollfd entry{fd, POLLIN, 0};
        if (::poll(&entry, 1, static_cast<int>(left.count())) <= 0)
            continue;
        char c = 0;
        ssize_t got = ::read(fd, &c, 1);
        if (got <= 0)
            return std::nullopt;
        if (c == '\n')
            return line;
        line += c;
    }
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

int Process::stop(int number, std::chrono::milliseconds patience) {
    if (pid_ <= 0)
        return -1;
    signal(number);
    if (auto status = wait_for(patience))
        return *status;
    signal(SIGKILL);
    return *wait_for(std::chrono::hours(1)); // SIGKILL cannot be caught: the end is near
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
    Process child = Process::spawn(argv, environment, scratch / "stdout", scratch / "stderr");
    RunResult result;
    auto status = child.wait_for(timeout);
    result.status = status ? *status : -1;
    if (!status)
        child.stop(SIGKILL);
    result.out = scratch.read("stdout");
    result.err = scratch.read("stderr");
    return result;
}

ChildOutcome run_in_child(const std::function<std::string(int report_fd)>& body,
                          std::chrono::milliseconds timeout) {
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int error = errno;
        ::close(report[0]);
        ::close(report[1]);
        throw std::runtime_error(std::string("fork: ") + std::strerror(error));
    }
    if (pid == 0) {
        ::close(report[0]);
        std::string message;
        try {
            message = body(report[1]);
        } catch (const std::exception& error) {
            message = std::string("exception: ") + error.what();
        } catch (...) {
            message = "an exception that is not a std::exception";
        }
        (void)!::write(report[1], message.data(), message.size());
        ::_exit(message.empty() ? 0 : 1);
    }
    ::close(report[1]);
    Process child = Process::adopt(pid);
    ChildOutcome outcome;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // The message ends when the child's end of the pipe closes: at its exit.
    bool ended = false;
    while (!ended) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd entry{report[0], POLLIN, 0};
        if (left.count() <= 0 || ::poll(&entry, 1, static_cast<int>(left.count())) == 0)
            break;
        char buffer[512];
        const ssize_t got = ::read(report[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        ended = got <= 0;
        if (got > 0)
            outcome.message.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(report[0]);
    if (!ended) {
        child.stop(SIGKILL);
        outcome.message += outcome.message.empty() ? "" : "; ";
        outcome.message += "the child did not finish by the deadline";
        return outcome;
    }
    // Its pipe closed as it exited: it is about to be a zombie.
    const auto status = child.wait_for(timeout);
    outcome.status = status ? *status : -1;
    return outcome;
}

void apply_environment(const EnvironmentChanges& changes) {
    for (const auto& [name, value] : changes) {
        const int rc = value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
        if (rc != 0)
            throw std::runtime_error("setting " + name + ": " + std::strerror(errno));
    }
}

std::string required_environment(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0')
        throw std::runtime_error(std::string("the test needs ") + name + " (meson sets it)");
    return value;
}

std::vector<pid_t> process_and_children(pid_t pid) {
    std::vector<pid_t> pids{pid};
    std::error_code error;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
        std::ifstream children(task.path() / "children");
        pid_t child = 0;
        while (children >> child)
            pids.push_back(child);
    }
    return pids;
}

} // namespace rpmem::test
