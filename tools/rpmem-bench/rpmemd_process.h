// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/error.h"
#include "channel/credentials.h"

namespace rpmem::bench {

// A private rpmemd for a benchmark, as an administrator would run it: credentials made for it,
// a pool set directory and a config file in `directory`, the daemon a child process listening
// on 127.0.0.1 at a free port (read back from its port file). kill() and restart() play a
// daemon's crash and its return on the same port. Stopped with SIGTERM when the object goes.
class RpmemdProcess {
public:
    // `rpmemd` is the binary (a bare name is looked up in PATH); `config_lines` are extra
    // `key = value` lines for its config; `shared` (when not null): another daemon's
    // credentials, so that one client reaches both, instead of new ones.
    static Result<std::unique_ptr<RpmemdProcess>>
    start(const std::filesystem::path& rpmemd, const std::filesystem::path& directory,
          const std::vector<std::string>& config_lines,
          const channel::CredentialFiles* shared = nullptr);
    ~RpmemdProcess();
    RpmemdProcess(const RpmemdProcess&) = delete;
    RpmemdProcess& operator=(const RpmemdProcess&) = delete;

    // Sends `signal` and, for SIGKILL, reaps the daemon (its workers end with it).
    void kill(int signal);
    // Starts the daemon again with the same config, directory and port (a running one gets
    // SIGTERM first); returns once it listens.
    Result<void> restart();

    std::uint16_t port() const noexcept { return port_; }
    pid_t pid() const noexcept { return pid_; }
    const std::filesystem::path& poolset_dir() const noexcept { return poolset_dir_; }
    const std::filesystem::path& log_file() const noexcept { return log_file_; }
    const channel::CredentialFiles& credentials() const noexcept { return credentials_; }

private:
    RpmemdProcess() = default;
    // Writes the config with `listen = 127.0.0.1:PORT` (0: any free port), spawns the daemon
    // and reads its port back.
    Result<void> spawn(std::uint16_t port);
    void stop(int signal) noexcept;

    std::filesystem::path binary_;
    std::filesystem::path directory_;
    std::vector<std::string> config_lines_;
    pid_t pid_ = -1;
    std::uint16_t port_ = 0;
    std::filesystem::path poolset_dir_;
    std::filesystem::path log_file_;
    channel::CredentialFiles credentials_;
};

// The binary next to this program in a build tree (`<build>/rpmemd/rpmemd` for
// `<build>/tools/rpmem-bench/rpmem-bench`) when there is one, else `name` as given.
std::filesystem::path sibling_in_build_tree(const std::filesystem::path& relative,
                                            const std::filesystem::path& name);

} // namespace rpmem::bench
