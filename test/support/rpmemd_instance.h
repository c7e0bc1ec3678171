// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "process.h"
#include "temp_dir.h"

namespace rpmem::test {

// A real rpmemd for a test: credentials made for it (CA, server certificate for localhost and
// 127.0.0.1, client certificate), a pool set directory, a config file, the daemon started as a
// child listening on 127.0.0.1 (or Options::listen_host) at a free port (started by
// start_rpmemd), and the client environment that reaches it. Stopped (SIGTERM, then SIGKILL) when
// the object goes.
class RpmemdInstance {
public:
    struct Options {
        std::vector<std::string> config_lines; // extra `key = value` lines
        std::string client_identity = "rpmem-test";
        bool pmem = true; // PMEM_IS_PMEM_FORCE=1: flush with CPU instructions, not msync
        // Use the credentials of another instance (its tls_dir()) instead of new ones, so that
        // one client reaches both.
        std::filesystem::path shared_credentials;
        // Where rpmemd listens and the names its certificate is made for (a test in network
        // namespaces uses the target's address for both).
        std::string listen_host = "127.0.0.1";
        std::vector<std::string> server_names = {"localhost", "127.0.0.1"};
        // A command that runs its arguments in the same process, put before rpmemd's path
        // (e.g. {"ip", "netns", "exec", NAME}); see RpmemdLaunch::launcher.
        std::vector<std::string> launcher;
        EnvironmentChanges environment; // for the daemon, besides PMEM_IS_PMEM_FORCE
    };

    explicit RpmemdInstance(const TempDir& root, const Options& options);
    RpmemdInstance(const TempDir& root)
        : RpmemdInstance(root, Options{}) {}
    ~RpmemdInstance();

    std::uint16_t port() const noexcept { return port_; }
    std::string target() const { return listen_host_ + ":" + std::to_string(port_); }
    const std::filesystem::path& poolset_dir() const noexcept { return poolset_dir_; }
    const std::filesystem::path& log_file() const noexcept { return log_; }
    const std::filesystem::path& tls_dir() const noexcept { return tls_dir_; }

    // RPMEM_TLS_* and friends for a client of this daemon.
    EnvironmentChanges client_environment() const;

    // Writes a pool set file into the pool set directory.
    std::filesystem::path write_pool_set(const std::string& name, const std::string& text) const;

    void kill(int signal);
    // SIGTERM and wait; returns the exit status.
    int stop();
    // Starts the daemon again with the same config, on the same port (after stop() or kill()).
    void restart();
    Process& process() { return process_; }

private:
    void start();

    std::filesystem::path dir_;
    std::filesystem::path poolset_dir_;
    std::filesystem::path config_;
    std::filesystem::path port_file_;
    std::filesystem::path log_;
    std::filesystem::path tls_dir_;
    bool pmem_;
    std::string listen_host_;
    std::vector<std::string> launcher_;
    EnvironmentChanges environment_;
    Process process_;
    std::uint16_t port_ = 0;
};

} // namespace rpmem::test
