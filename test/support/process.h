// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rpmem::test {

// Environment changes for a child: a value sets the variable, nullopt unsets it.
using EnvironmentChanges = std::map<std::string, std::optional<std::string>>;

// Applies `changes` to this process's own environment (for a library that reads it, such as
// librpmem's settings); throws when one cannot be made.
void apply_environment(const EnvironmentChanges& changes);

// A child process started by a test (rpmemd, pmempool, a client program). The destructor
// kills it (SIGKILL) and reaps it if it is still running, so no test leaves one behind.
// Output (stdout and stderr together) goes to `log`, when given, else is inherited; or each
// stream to a file of its own.
class Process {
public:
    static Process spawn(const std::vector<std::string>& argv,
                         const EnvironmentChanges& environment = {},
                         const std::optional<std::filesystem::path>& log = std::nullopt);

    // As spawn(), with stdout and stderr each to a file of its own.
    static Process spawn(const std::vector<std::string>& argv,
                         const EnvironmentChanges& environment,
                         const std::filesystem::path& stdout_log,
                         const std::filesystem::path& stderr_log);

    // As spawn(), with the child's stdout on a pipe whose read end is returned (the caller
    // closes it); stderr goes to `log` or is inherited. The child runs in `working_directory`
    // when it is given (Debian's libfabric drops crash files into a crashing program's one).
    static Process spawn_piped(const std::vector<std::string>& argv,
                               const EnvironmentChanges& environment, int& stdout_fd,
                               const std::optional<std::filesystem::path>& log = std::nullopt,
                               const std::filesystem::path& working_directory = {});

    // Takes over a child this process forked itself.
    static Process adopt(pid_t child) { return Process(child); }

    Process() = default; // no child
    Process(Process&& other) noexcept;
    Process& operator=(Process&& other) noexcept;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    ~Process();

    pid_t pid() const noexcept { return pid_; }
    bool running() const noexcept { return pid_ > 0; }

    void signal(int number) const;
    // The exit status (or 128 + signal), or nullopt when it is still running at the deadline.
    std::optional<int> wait_for(std::chrono::milliseconds timeout);
    // Sends `number` and waits for the exit; a child still running after `patience` is killed
    // (SIGKILL). Returns the exit status (128 + signal when a signal ended it), -1 when there
    // was no child.
    int stop(int number = SIGTERM, std::chrono::milliseconds patience = std::chrono::seconds(20));

private:
    explicit Process(pid_t pid)
        : pid_(pid) {}
    pid_t pid_ = -1;
};

struct RunResult {
    int status = -1; // exit status, 128 + signal, or -1 when it timed out (then killed)
    std::string out; // stdout
    std::string err; // stderr
    // Both, for messages and for searching either.
    std::string output() const { return out + err; }
};

// What a function run in a forked child (run_in_child) came to.
struct ChildOutcome {
    int status = -1;     // 0 when the body returned "", 1 when it did not, 128 + signal when
                         // one ended it, -1 when it had not ended by the deadline (then killed)
    std::string message; // what the body returned: "" when every expectation held
};

// Runs `body` in a forked child, for what would change the test process for good (a mount
// namespace, a sandbox, a changed identity): the test process stays as it was. The body
// returns "" when every expectation held, else what failed (an exception counts as a failure);
// that text comes back through a pipe whose descriptor the body receives (a body that closes
// descriptors keeps it), and the child then leaves with _exit, so nothing of the test process's
// teardown runs twice. No Catch2 assertion may be used in the body. The parent waits until
// `timeout`, then kills the child.
ChildOutcome run_in_child(const std::function<std::string(int report_fd)>& body,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Reads one line from `fd` (without the newline), waiting until `deadline`; nullopt at the
// deadline or at the end of the stream.
std::optional<std::string> read_line(int fd, std::chrono::steady_clock::time_point deadline);

// `pid` and its children (e.g. rpmemd and its data-path workers), from /proc/PID/task/*/children,
// for signals that must reach them all (SIGSTOP, SIGCONT).
std::vector<pid_t> process_and_children(pid_t pid);

// Runs a program to completion (or kills it at the deadline) and collects its stdout and stderr.
RunResult run(const std::vector<std::string>& argv, const EnvironmentChanges& environment = {},
              std::chrono::milliseconds timeout = std::chrono::seconds(120));

// The value of a variable meson set for the test (a built program's path, ...); throws when
// it is missing.
std::string required_environment(const char* name);

} // namespace rpmem::test
