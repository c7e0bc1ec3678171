// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rpmem::test {

// Environment changes for a child: a value sets the variable, nullopt unsets it.
using EnvironmentChanges = std::map<std::string, std::optional<std::string>>;

// A child process started by a test (rpmemd, pmempool, a client program). The destructor
// kills it (SIGKILL) and reaps it if it is still running, so no test leaves one behind.
// Output (stdout and stderr together) goes to `log`, when given, else is inherited.
class Process {
public:
    static Process spawn(const std::vector<std::string>& argv,
                         const EnvironmentChanges& environment = {},
                         const std::optional<std::filesystem::path>& log = std::nullopt);

    // As spawn(), with the child's stdout on a pipe whose read end is returned (the caller
    // closes it); stderr goes to `log` or is inherited.
    static Process spawn_piped(const std::vector<std::string>& argv,
                               const EnvironmentChanges& environment, int& stdout_fd,
                               const std::optional<std::filesystem::path>& log = std::nullopt);

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

private:
    explicit Process(pid_t pid)
        : pid_(pid) {}
    pid_t pid_ = -1;
};

struct RunResult {
    int status = -1;    // exit status, 128 + signal, or -1 when it timed out (then killed)
    std::string output; // stdout and stderr
};

// Reads one line from `fd` (without the newline), waiting until `deadline`; nullopt at the
// deadline or at the end of the stream.
std::optional<std::string> read_line(int fd, std::chrono::steady_clock::time_point deadline);

// Runs a program to completion (or kills it at the deadline) and collects its output.
RunResult run(const std::vector<std::string>& argv, const EnvironmentChanges& environment = {},
              std::chrono::milliseconds timeout = std::chrono::seconds(120));

// The value of a variable meson set for the test (a built program's path, ...); throws when
// it is missing.
std::string required_environment(const char* name);

} // namespace rpmem::test
