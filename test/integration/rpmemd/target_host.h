// SPDX-License-Identifier: BSD-3-Clause
// The target side of an integration test: a scratch directory with TLS credentials made for the
// test, a pool set directory, a config file, and the real rpmemd serving it on 127.0.0.1 at a
// port of its choosing; plus control-channel clients for it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "channel/client.h"
#include "channel/credentials.h"
#include "child_process.h"

namespace rpmem::test {

// A scratch directory removed at the end of the test.
class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }
    std::string operator/(const std::string& name) const { return (path_ / name).string(); }
    // Writes `text` to `name` (directories created) with `mode`; returns the path.
    std::string write(const std::string& name, const std::string& text, unsigned mode = 0644) const;
    std::string read(const std::string& name) const;

private:
    std::filesystem::path path_;
};

// "PMEMPOOLSET" with `parts` parts of `size` named `prefix`.N in `directory`, plus OPTION lines.
std::string pool_set_text(const std::filesystem::path& directory, const std::string& prefix,
                          int parts, const std::string& size = "2M",
                          const std::string& options = "");

// Attributes as libpmemobj sends them for a pool it creates (signature PMEMOBJ, major 6,
// CKSUM_2K and SDS, every UUID set, this machine's arch flags), SINGLEHDR when asked.
PoolAttributes pmemobj_attributes(bool single_header = false);

class TargetHost {
public:
    struct Options {
        std::vector<std::string> config_lines; // added to the generated config file
        std::string client_identity = "alice";
        bool start = true; // start rpmemd right away
        // Runs rpmemd through this command (e.g. {"prlimit", "--nofile=1024:1024"}), which
        // must exec it in the same process.
        std::vector<std::string> launcher;
    };

    TargetHost();
    explicit TargetHost(Options options);
    ~TargetHost();

    ScratchDir& dir() noexcept { return dir_; }
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
    DaemonProcess& daemon();
    std::uint16_t port();

    // A control channel to the daemon with `tls` (default: the test's client credentials).
    Result<std::unique_ptr<channel::Client>> connect(std::optional<channel::TlsFiles> tls = {},
                                                     std::string server_name = {});
    // As connect(), failing the test when it fails.
    std::unique_ptr<channel::Client> client();

    // Waits until the daemon's log contains `text` (inotify on the log file, no polling
    // loop), within kPatience; false when it never came.
    bool wait_for_log(std::string_view text);

    // The test CA (its key is in the scratch directory), to sign more certificates.
    channel::CertifiedKey test_ca() const;
    // Credentials of another client identity, its certificate signed by the test CA.
    channel::TlsFiles client_tls(const std::string& identity);

    // The environment rpmemctl and the client library read (RPMEM_TLS_*).
    std::map<std::string, std::string> client_environment() const;
    // "127.0.0.1:PORT".
    std::string target();

private:
    Options options_;
    ScratchDir dir_;
    channel::CredentialFiles credentials_;
    std::optional<DaemonProcess> daemon_;
};

} // namespace rpmem::test
