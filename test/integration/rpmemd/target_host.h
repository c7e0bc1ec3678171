// SPDX-License-Identifier: BSD-3-Clause
// The target side of an integration test: a scratch directory with TLS credentials made for the
// test, a pool set directory, a config file, and the real rpmemd serving it on 127.0.0.1 at a
// port of its choosing; plus control-channel clients for it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "base/error.h"
#include "channel/client.h"
#include "channel/credentials.h"
#include "pool_fixtures.h"
#include "process.h"
#include "temp_dir.h"

namespace rpmem::test {

using namespace std::chrono_literals;

// Generous: the machine is small and shared and everything runs under ASan. Waits end as soon
// as their condition holds; this only bounds how long a broken test takes to fail.
inline constexpr std::chrono::milliseconds kPatience = 60s;

class TargetHost {
public:
    struct Options {
        std::vector<std::string> config_lines; // added to the generated config file
        std::string client_identity = "alice";
        bool start = true; // start rpmemd right away
        // Runs rpmemd through this command (e.g. {"prlimit", "--nofile=1024:1024"}), which
        // must exec it in the same process.
        std::vector<std::string> launcher;
        // Runs rpmemd as this user (the test must be root): the scratch directory becomes the
        // user's, and exec-as (test/support/exec_as.cpp, from EXEC_AS) drops to the user.
        std::string run_as;
        std::string executable;         // instead of the build's rpmemd (RPMEMD)
        EnvironmentChanges environment; // rpmemd's
    };

    TargetHost();
    explicit TargetHost(Options options);
    ~TargetHost();

    TempDir& dir() noexcept { return dir_; }
    const channel::CredentialFiles& credentials() const noexcept { return credentials_; }
    std::string sets_dir() const { return dir_ / "sets"; }
    std::string config_file() const { return dir_ / "rpmemd.conf"; }
    std::string log_file() const { return dir_ / "rpmemd.log"; }

    // Writes a pool set file beneath the pool set directory; returns its path.
    std::string write_set(const std::string& name, const std::string& text,
                          unsigned mode = 0644) const;
    // A set of `parts` 2 MiB parts stored in the scratch directory as `prefix`.N.
    std::string write_set(const std::string& name, const std::string& prefix, int parts,
                          const std::string& options = "") const;

    void start();
    // The running daemon (started by start_rpmemd, its stderr inherited).
    Process& daemon();
    std::uint16_t port();

    // A control channel to the daemon with `tls` (default: the test's client credentials).
    Result<std::unique_ptr<channel::Client>> connect(std::optional<channel::TlsFiles> tls = {},
                                                     std::string server_name = {});
    // As connect(), failing the test when it fails.
    std::unique_ptr<channel::Client> client();

    // Waits until the daemon's log contains `text` at least `times` times (inotify on the log
    // file, no polling loop), within kPatience; false when it never came.
    bool wait_for_log(std::string_view text, std::size_t times = 1);
    // How often the daemon's log contains `text` now (for waiting on the next one).
    std::size_t log_count(std::string_view text);
    // The daemon's newest living data-path worker (a child running `rpmemd --worker`, from
    // /proc); 0 when none.
    pid_t last_worker_pid();

    // The test CA (its key is in the scratch directory), to sign more certificates.
    channel::CertifiedKey test_ca() const;
    // Credentials of another client identity, its certificate signed by the test CA.
    channel::TlsFiles client_tls(const std::string& identity);

    // The environment rpmemctl and the client library read (RPMEM_TLS_*).
    EnvironmentChanges client_environment() const;
    // "127.0.0.1:PORT".
    std::string target();

private:
    Options options_;
    TempDir dir_{"rpmemd-it"};
    channel::CredentialFiles credentials_;
    Process daemon_;
    std::uint16_t port_ = 0;
};

} // namespace rpmem::test
