// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd_instance.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "channel/credentials.h"

namespace rpmem::test {

namespace {

constexpr std::chrono::seconds kStartTimeout{30};

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

RpmemdInstance::RpmemdInstance(const TempDir& root, const Options& options)
    : dir_(root / "rpmemd")
    , poolset_dir_(dir_ / "pools")
    , config_(dir_ / "rpmemd.conf")
    , port_file_(dir_ / "port")
    , log_(dir_ / "rpmemd.log")
    , tls_dir_(options.shared_credentials.empty() ? dir_ / "tls" : options.shared_credentials)
    , pmem_(options.pmem) {
    std::filesystem::create_directories(poolset_dir_);
    if (options.shared_credentials.empty()) {
        channel::CredentialOptions credentials;
        credentials.server_names = {"localhost", "127.0.0.1"};
        credentials.client_identity = options.client_identity;
        auto written = channel::write_credentials(tls_dir_, credentials);
        if (!written)
            throw std::runtime_error("making credentials: " + written.error().message());
    }

    std::ofstream config(config_);
    config << "poolset-dir = " << poolset_dir_.string() << "\n"
           << "listen = 127.0.0.1:0\n"
           << "port-file = " << port_file_.string() << "\n"
           << "tls-ca = " << (tls_dir_ / "ca.crt").string() << "\n"
           << "tls-cert = " << (tls_dir_ / "server.crt").string() << "\n"
           << "tls-key = " << (tls_dir_ / "server.key").string() << "\n"
           << "log-level = info\n";
    for (const std::string& line : options.config_lines)
        config << line << "\n";
    config.close();
    start();
}

RpmemdInstance::~RpmemdInstance() {
    if (process_.running()) {
        process_.signal(SIGTERM);
        if (!process_.wait_for(std::chrono::seconds(10)))
            process_.signal(SIGKILL);
    }
}

void RpmemdInstance::start() {
    std::filesystem::remove(port_file_);
    if (::mkfifo(port_file_.c_str(), 0600) != 0)
        throw std::runtime_error("mkfifo " + port_file_.string() + ": " + std::strerror(errno));
    EnvironmentChanges environment;
    if (pmem_)
        environment["PMEM_IS_PMEM_FORCE"] = "1";
    process_ = Process::spawn({required_environment("RPMEMD"), "--config", config_.string()},
                              environment, log_);

    // Wait for the port line on the FIFO, or for the daemon's death, whichever comes first.
    const int fifo = ::open(port_file_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, process_.pid(), 0));
    if (fifo < 0 || pidfd < 0)
        throw std::runtime_error(std::string("waiting for rpmemd: ") + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    std::string line;
    bool died = false;
    while (line.find('\n') == std::string::npos && !died) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        pollfd entries[2] = {{fifo, POLLIN, 0}, {pidfd, POLLIN, 0}};
        if (::poll(entries, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
            break;
        if ((entries[0].revents & POLLIN) != 0) {
            char buffer[32];
            ssize_t got = ::read(fifo, buffer, sizeof buffer);
            if (got > 0)
                line.append(buffer, static_cast<std::size_t>(got));
        }
        if ((entries[1].revents & POLLIN) != 0 && line.find('\n') == std::string::npos)
            died = true;
    }
    ::close(fifo);
    ::close(pidfd);
    if (line.find('\n') == std::string::npos)
        throw std::runtime_error((died ? "rpmemd exited before listening: "
                                       : "rpmemd did not report its port in time: ") +
                                 read_file(log_));
    port_ = static_cast<std::uint16_t>(std::stoul(line));
}

EnvironmentChanges RpmemdInstance::client_environment() const {
    return {
        {"RPMEM_TLS_CA", (tls_dir_ / "ca.crt").string()},
        {"RPMEM_TLS_CERT", (tls_dir_ / "client.crt").string()},
        {"RPMEM_TLS_KEY", (tls_dir_ / "client.key").string()},
        {"RPMEM_CONFIG", std::nullopt},
        {"RPMEM_PROVIDER", "tcp"},
    };
}

std::filesystem::path RpmemdInstance::write_pool_set(const std::string& name,
                                                     const std::string& text) const {
    auto path = poolset_dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
}

void RpmemdInstance::kill(int signal) {
    process_.signal(signal);
    if (signal == SIGKILL)
        (void)process_.wait_for(std::chrono::seconds(10));
}

int RpmemdInstance::stop() {
    process_.signal(SIGTERM);
    auto status = process_.wait_for(std::chrono::seconds(20));
    if (!status) {
        process_.signal(SIGKILL);
        return -1;
    }
    return *status;
}

void RpmemdInstance::restart() {
    if (process_.running())
        stop();
    start();
}

} // namespace rpmem::test
