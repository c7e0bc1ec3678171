// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd_instance.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <signal.h>

#include "channel/credentials.h"
#include "rpmemd_launch.h"

namespace rpmem::test {

RpmemdInstance::RpmemdInstance(const TempDir& root, const Options& options)
    : dir_(root / "rpmemd")
    , poolset_dir_(dir_ / "pools")
    , config_(dir_ / "rpmemd.conf")
    , port_file_(dir_ / "port")
    , log_(dir_ / "rpmemd.log")
    , tls_dir_(options.shared_credentials.empty() ? dir_ / "tls" : options.shared_credentials)
    , pmem_(options.pmem)
    , listen_host_(options.listen_host)
    , launcher_(options.launcher)
    , environment_(options.environment) {
    std::filesystem::create_directories(poolset_dir_);
    if (options.shared_credentials.empty()) {
        channel::CredentialOptions credentials;
        credentials.server_names = options.server_names;
        credentials.client_identity = options.client_identity;
        auto written = channel::write_credentials(tls_dir_, credentials);
        if (!written)
            throw std::runtime_error("making credentials: " + written.error().message());
    }

    std::ofstream config(config_);
    config << "poolset-dir = " << poolset_dir_.string() << "\n"
           << "listen = " << listen_host_ << ":0\n"
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
    (void)process_.stop(SIGTERM, std::chrono::seconds(10));
}

void RpmemdInstance::start() {
    RpmemdLaunch launch;
    launch.config = config_;
    launch.port_file = port_file_;
    launch.launcher = launcher_;
    launch.environment = environment_;
    if (pmem_)
        launch.environment.emplace("PMEM_IS_PMEM_FORCE", std::string(1, '1'));
    launch.log = log_;
    StartedRpmemd started = start_rpmemd(launch);
    process_ = std::move(started.process);
    port_ = started.port;
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
    return process_.stop(SIGTERM);
}

void RpmemdInstance::restart() {
    if (process_.running())
        stop();
    // Back on the same port, as a restarted daemon is for its clients.
    std::ifstream in(config_);
    std::stringstream text;
    text << in.rdbuf();
    std::string config = text.str();
    const std::string any_port = "listen = " + listen_host_ + ":0\n";
    if (auto at = config.find(any_port); at != std::string::npos && port_ != 0)
        config.replace(at, any_port.size(),
                       "listen = " + listen_host_ + ":" + std::to_string(port_) + "\n");
    std::ofstream(config_) << config;
    start();
}

} // namespace rpmem::test
