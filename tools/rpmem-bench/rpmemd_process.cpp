// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd_process.h"

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace rpmem::bench {

namespace fs = std::filesystem;

namespace {

// rpmemd writes "PORT\n" once it listens; a regular file read until the line is whole.
Result<std::uint16_t> wait_for_port(const fs::path& port_file, pid_t pid, const fs::path& log) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid)
            return fail(ECHILD, fmt::format("rpmemd exited before listening (status {}); see {}",
                                            status, log.string()));
        std::ifstream file(port_file);
        // A line is whole once its newline is there: getline stops before the end of file.
        if (std::string line; std::getline(file, line) && !file.eof()) {
            unsigned port = 0;
            if (std::istringstream(line) >> port && port > 0 && port < 65536)
                return static_cast<std::uint16_t>(port);
            return fail(EPROTO, fmt::format("rpmemd wrote '{}' to its port file", line));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return fail(ETIMEDOUT, fmt::format("rpmemd did not listen within 30 s; see {}", log.string()));
}

} // namespace

Result<std::unique_ptr<RpmemdProcess>>
RpmemdProcess::start(const fs::path& rpmemd, const fs::path& directory,
                     const std::vector<std::string>& config_lines,
                     const channel::CredentialFiles* shared) {
    std::unique_ptr<RpmemdProcess> process(new RpmemdProcess);
    if (shared != nullptr) {
        process->credentials_ = *shared;
    } else {
        channel::CredentialOptions options;
        options.server_names = {"localhost", "127.0.0.1"};
        options.client_identity = "rpmem-bench";
        auto credentials = channel::write_credentials(directory / "tls", options);
        if (!credentials)
            return fail(std::move(credentials.error()));
        process->credentials_ = *credentials;
    }
    process->binary_ = rpmemd;
    process->directory_ = directory;
    process->config_lines_ = config_lines;
    process->poolset_dir_ = directory / "pools";
    process->log_file_ = directory / "rpmemd.log";
    std::error_code error;
    fs::create_directories(process->poolset_dir_, error);
    if (error)
        return fail(Error::from_errno(error.value(), "creating " + process->poolset_dir_.string()));
    if (auto spawned = process->spawn(0); !spawned)
        return fail(std::move(spawned.error()));
    return process;
}

Result<void> RpmemdProcess::spawn(std::uint16_t port) {
    const fs::path port_file = directory_ / "rpmemd.port";
    const fs::path config = directory_ / "rpmemd.conf";
    std::error_code ignored;
    fs::remove(port_file, ignored); // the new daemon's line, not the old one's
    {
        std::ofstream out(config);
        out << "poolset-dir = " << poolset_dir_.string() << "\n"
            << "listen = 127.0.0.1:" << port << "\n"
            << "port-file = " << port_file.string() << "\n"
            << "tls-ca = " << credentials_.ca_certificate.string() << "\n"
            << "tls-cert = " << credentials_.server_certificate.string() << "\n"
            << "tls-key = " << credentials_.server_key.string() << "\n"
            << "log-file = " << log_file_.string() << "\n"
            << "log-level = info\n";
        for (const std::string& line : config_lines_)
            out << line << "\n";
        if (!out)
            return fail(EIO, "writing " + config.string());
    }

    const std::string binary = binary_.string();
    const std::string config_text = config.string();
    std::vector<char*> argv{const_cast<char*>(binary.c_str()), const_cast<char*>("--config"),
                            const_cast<char*>(config_text.c_str()), nullptr};
    if (int spawned = ::posix_spawnp(&pid_, binary.c_str(), nullptr, nullptr, argv.data(), environ);
        spawned != 0) {
        pid_ = -1;
        return fail(Error::from_errno(spawned, "starting " + binary));
    }
    auto listening = wait_for_port(port_file, pid_, log_file_);
    if (!listening) {
        if (listening.error().errno_value() == ECHILD)
            pid_ = -1; // already reaped
        return fail(std::move(listening.error()));
    }
    if (port != 0 && *listening != port)
        return fail(EADDRINUSE,
                    fmt::format("rpmemd listens on {}, not on {} as configured", *listening, port));
    port_ = *listening;
    return {};
}

void RpmemdProcess::kill(int signal) {
    if (signal == SIGKILL)
        stop(SIGKILL);
    else if (pid_ > 0)
        ::kill(pid_, signal);
}

Result<void> RpmemdProcess::restart() {
    stop(SIGTERM);
    return spawn(port_);
}

void RpmemdProcess::stop(int signal) noexcept {
    if (pid_ <= 0)
        return;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

RpmemdProcess::~RpmemdProcess() {
    stop(SIGTERM);
}

fs::path sibling_in_build_tree(const fs::path& relative, const fs::path& name) {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (!error) {
        const fs::path candidate = self.parent_path().parent_path().parent_path() / relative;
        if (fs::exists(candidate, error))
            return candidate;
    }
    return name;
}

} // namespace rpmem::bench
