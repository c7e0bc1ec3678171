// SPDX-License-Identifier: BSD-3-Clause
// A program run as a child of the test: rpmemd serving (with its port read back through a
// pipe), or rpmemd/rpmemctl run to completion with their output captured.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/error.h"

namespace rpmem::test {

using namespace std::chrono_literals;

// Generous: the machine is small and shared and everything runs under ASan. Waits end as soon
// as their condition holds; this only bounds how long a broken test takes to fail.
inline constexpr std::chrono::milliseconds kPatience = 60s;

// The path of a program built by this project, from the environment variable meson's test
// definition sets (RPMEMD, RPMEMCTL). Fails the test when unset.
std::string built_program(const char* variable);

// rpmemd serving in the background. start() passes `--port-file /dev/fd/3` with fd 3 the
// write end of a pipe and reads the port from it (EOF first: the daemon died, and its exit is
// reported). Destruction kills it (SIGKILL) if still running and reaps it.
class DaemonProcess {
public:
    static Result<DaemonProcess> start(const std::string& program,
                                       const std::vector<std::string>& args);

    DaemonProcess(DaemonProcess&& other) noexcept;
    DaemonProcess& operator=(DaemonProcess&&) = delete;
    DaemonProcess(const DaemonProcess&) = delete;
    ~DaemonProcess();

    std::uint16_t port() const noexcept { return port_; }
    pid_t pid() const noexcept { return pid_; }
    bool running() const noexcept { return pid_ > 0; }

    // Sends `signal` and waits for the exit; returns the wait status.
    int stop(int signal);

private:
    DaemonProcess(pid_t pid, std::uint16_t port)
        : pid_(pid)
        , port_(port) {}
    pid_t pid_ = -1;
    std::uint16_t port_ = 0;
};

struct Completed {
    int status = -1; // exit status (128 + signal when killed)
    std::string out;
    std::string err;
};

// Runs `program` with `args` (and `environment` added to this process's) to completion within
// kPatience, capturing stdout and stderr.
Completed run_program(const std::string& program, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& environment = {});

} // namespace rpmem::test
