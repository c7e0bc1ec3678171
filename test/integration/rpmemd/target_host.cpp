// SPDX-License-Identifier: BSD-3-Clause
#include "target_host.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include <catch2/catch.hpp>
#include <openssl/pem.h>
#include <poll.h>
#include <pwd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rpmemd_launch.h"

namespace rpmem::test {

namespace {

// Makes `dir` and everything beneath it `uid`'s, for an rpmemd that runs as that user.
void hand_over(const std::filesystem::path& dir, uid_t uid, gid_t gid) {
    REQUIRE(::lchown(dir.c_str(), uid, gid) == 0);
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
        REQUIRE(::lchown(entry.path().c_str(), uid, gid) == 0);
}

} // namespace

TargetHost::TargetHost()
    : TargetHost(Options{}) {}

TargetHost::TargetHost(Options options)
    : options_(std::move(options)) {
    channel::CredentialOptions tls;
    tls.server_names = {"localhost", "127.0.0.1"};
    tls.client_identity = options_.client_identity;
    tls.write_ca_key = true; // tests sign more client certificates with it
    auto files = channel::write_credentials(dir_.path() / "tls", tls);
    REQUIRE(files);
    credentials_ = *files;
    std::filesystem::create_directories(sets_dir());

    std::string config = "# written by the test\n"
                         "poolset-dir = " +
                         sets_dir() +
                         "\n"
                         "listen = 127.0.0.1:0\n"
                         "tls-ca = " +
                         credentials_.ca_certificate.string() +
                         "\n"
                         "tls-cert = " +
                         credentials_.server_certificate.string() +
                         "\n"
                         "tls-key = " +
                         credentials_.server_key.string() +
                         "\n"
                         "log-file = " +
                         log_file() +
                         "\n"
                         "log-level = info\n";
    for (const auto& line : options_.config_lines)
        config += line + "\n";
    dir_.write("rpmemd.conf", config);
    dir_.write("client.conf", "");
    if (options_.start)
        start();
}

TargetHost::~TargetHost() = default;

void TargetHost::start() {
    REQUIRE_FALSE(daemon_.running());
    RpmemdLaunch launch;
    launch.config = config_file();
    launch.port_file = dir_ / "rpmemd.port";
    launch.launcher = options_.launcher;
    launch.executable = options_.executable;
    launch.environment = options_.environment;
    launch.patience = kPatience;
    if (!options_.run_as.empty()) {
        const passwd* user = ::getpwnam(options_.run_as.c_str());
        REQUIRE(user != nullptr);
        launch.port_file_owner = std::pair(user->pw_uid, user->pw_gid);
        hand_over(dir_.path(), user->pw_uid, user->pw_gid);
        launch.launcher.insert(launch.launcher.end(),
                               {required_environment("EXEC_AS"), options_.run_as});
    }
    StartedRpmemd started = start_rpmemd(launch);
    daemon_ = std::move(started.process);
    port_ = started.port;
}

Process& TargetHost::daemon() {
    REQUIRE(port_ != 0); // started (it may have ended since)
    return daemon_;
}

std::uint16_t TargetHost::port() {
    REQUIRE(port_ != 0);
    return port_;
}

std::string TargetHost::write_set(const std::string& name, const std::string& text,
                                  unsigned mode) const {
    return dir_.write("sets/" + name, text, mode);
}

std::string TargetHost::write_set(const std::string& name, const std::string& prefix, int parts,
                                  const std::string& options) const {
    return write_set(name, pool_set_text(dir_.path(), prefix, parts, "2M", options));
}

Result<std::unique_ptr<channel::Client>> TargetHost::connect(std::optional<channel::TlsFiles> tls,
                                                             std::string server_name) {
    channel::ClientConfig config;
    config.host = "127.0.0.1";
    config.port = port();
    config.server_name = std::move(server_name);
    config.tls = tls ? *tls : credentials_.client();
    config.connect_timeout = kPatience;
    config.handshake_timeout = kPatience;
    config.request_timeout = kPatience;
    return channel::Client::connect(std::move(config));
}

std::unique_ptr<channel::Client> TargetHost::client() {
    auto connected = connect();
    INFO((connected ? std::string() : connected.error().message()));
    REQUIRE(connected);
    return std::move(*connected);
}

std::size_t TargetHost::log_count(std::string_view text) {
    const std::string log = dir_.read("rpmemd.log");
    std::size_t count = 0;
    for (auto at = log.find(text); at != std::string::npos; at = log.find(text, at + text.size()))
        ++count;
    return count;
}

pid_t TargetHost::last_worker_pid() {
    // The daemon's children that run `rpmemd --worker`, the newest by start time (the 22nd
    // field of /proc/PID/stat, after the parenthesised command name).
    pid_t newest = 0;
    unsigned long long newest_start = 0;
    for (const pid_t pid : process_and_children(daemon().pid())) {
        const std::string proc = "/proc/" + std::to_string(pid);
        const std::string cmdline = read_text(proc + "/cmdline");
        if (pid == daemon().pid() ||
            cmdline.find(std::string("\0--worker\0", 10)) == std::string::npos)
            continue;
        const std::string stat = read_text(proc + "/stat");
        const std::size_t name_end = stat.rfind(')');
        if (name_end == std::string::npos) // it has just exited
            continue;
        std::istringstream fields(stat.substr(name_end + 1)); // from field 3, the state
        std::string field;
        unsigned long long start = 0;
        for (int index = 3; index <= 22 && fields >> field; ++index)
            if (index == 22)
                start = std::stoull(field);
        if (newest == 0 || start >= newest_start) {
            newest = pid;
            newest_start = start;
        }
    }
    return newest;
}

bool TargetHost::wait_for_log(std::string_view text, std::size_t times) {
    int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    REQUIRE(watch >= 0);
    auto deadline = std::chrono::steady_clock::now() + kPatience;
    // Watch first, then read: a line written in between is not missed.
    REQUIRE(::inotify_add_watch(watch, log_file().c_str(), IN_MODIFY) >= 0);
    bool found = false;
    for (;;) {
        if (log_count(text) >= times) {
            found = true;
            break;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        pollfd p{watch, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) > 0) {
            char events[4096];
            while (::read(watch, events, sizeof(events)) > 0) {
            }
        }
    }
    ::close(watch);
    return found;
}

channel::CertifiedKey TargetHost::test_ca() const {
    FILE* key_file = std::fopen(credentials_.ca_key.c_str(), "r");
    FILE* cert_file = std::fopen(credentials_.ca_certificate.c_str(), "r");
    REQUIRE(key_file != nullptr);
    REQUIRE(cert_file != nullptr);
    channel::KeyPtr key(PEM_read_PrivateKey(key_file, nullptr, nullptr, nullptr));
    channel::X509Ptr certificate(PEM_read_X509(cert_file, nullptr, nullptr, nullptr));
    std::fclose(key_file);
    std::fclose(cert_file);
    REQUIRE(key);
    REQUIRE(certificate);
    return channel::CertifiedKey(std::move(key), std::move(certificate));
}

channel::TlsFiles TargetHost::client_tls(const std::string& identity) {
    channel::CertifiedKey ca = test_ca();
    auto client =
        channel::make_client_certificate(ca, identity, channel::Validity::days_from_now(1));
    REQUIRE(client);
    std::string crt = dir_ / (identity + ".crt");
    std::string pem = dir_ / (identity + ".key");
    REQUIRE(client->write(crt, pem, true));
    return channel::TlsFiles{credentials_.ca_certificate, crt, pem};
}

EnvironmentChanges TargetHost::client_environment() const {
    return {{"RPMEM_TLS_CA", credentials_.ca_certificate.string()},
            {"RPMEM_TLS_CERT", credentials_.client_certificate.string()},
            {"RPMEM_TLS_KEY", credentials_.client_key.string()},
            // empty: nothing from ~/.config or /etc
            {"RPMEM_CONFIG", (dir_ / "client.conf").string()}};
}

std::string TargetHost::target() {
    return "127.0.0.1:" + std::to_string(port());
}

} // namespace rpmem::test
