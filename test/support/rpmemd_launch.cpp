// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd_launch.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rpmem::test {

namespace {

std::string contents_of(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Closes a descriptor at the end of the scope.
struct FdCloser {
    int fd;
    ~FdCloser() {
        if (fd >= 0)
            ::close(fd);
    }
};

} // namespace

StartedRpmemd start_rpmemd(const RpmemdLaunch& launch) {
    std::filesystem::remove(launch.port_file);
    if (::mkfifo(launch.port_file.c_str(), 0600) != 0)
        throw std::runtime_error("mkfifo " + launch.port_file.string() + ": " +
                                 std::strerror(errno));
    if (launch.port_file_owner && ::chown(launch.port_file.c_str(), launch.port_file_owner->first,
                                          launch.port_file_owner->second) != 0)
        throw std::runtime_error("chown " + launch.port_file.string() + ": " +
                                 std::strerror(errno));
    std::vector<std::string> argv = launch.launcher;
    argv.insert(argv.end(),
                {launch.executable.empty() ? required_environment("RPMEMD") : launch.executable,
                 "--config", launch.config.string(), "--port-file", launch.port_file.string()});
    StartedRpmemd started;
    started.process = Process::spawn(argv, launch.environment, launch.log);

    // Opened without waiting for the writer; the daemon's open for writing then does not wait
    // either. A pidfd turns readable when the daemon exits.
    const FdCloser fifo{::open(launch.port_file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    const FdCloser pidfd{static_cast<int>(::syscall(SYS_pidfd_open, started.process.pid(), 0))};
    if (fifo.fd < 0 || pidfd.fd < 0)
        throw std::runtime_error(std::string("waiting for rpmemd: ") + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + launch.patience;
    std::string line;
    bool died = false;
    while (line.find('\n') == std::string::npos && !died) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        pollfd entries[2] = {{fifo.fd, POLLIN, 0}, {pidfd.fd, POLLIN, 0}};
        if (::poll(entries, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
            break;
        if ((entries[0].revents & POLLIN) != 0) {
            char buffer[32];
            const ssize_t got = ::read(fifo.fd, buffer, sizeof buffer);
            if (got > 0)
                line.append(buffer, static_cast<std::size_t>(got));
        }
        if ((entries[1].revents & POLLIN) != 0 && line.find('\n') == std::string::npos)
            died = true;
    }
    if (line.find('\n') == std::string::npos) {
        std::string why = died ? "rpmemd exited before listening"
                               : "rpmemd did not report its "
                                 "port in time";
        if (died)
            why += " (status " + std::to_string(started.process.stop(SIGKILL)) + ")";
        why += launch.log ? ": " + contents_of(*launch.log) : " (its stderr is above)";
        throw std::runtime_error(why);
    }
    started.port = static_cast<std::uint16_t>(std::stoul(line));
    return started;
}

} // namespace rpmem::test
