// SPDX-License-Identifier: BSD-3-Clause
// rpmemd: the target daemon. Wires config, logging, the pool store, the TLS control server and
// the fabric data plane together; runs in the foreground until SIGINT or SIGTERM. With
// --remove SET it removes a pool and exits instead, as PMDK's rpmemd did for libpmempool.
// Exit status: 0, or the errno of the failure (EINVAL for a bad command line or config).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "rpmemd/supervisor/account_ids.h"
#include "rpmemd/supervisor/config.h"
#include "rpmemd/supervisor/daemon.h"
#include "rpmemd/supervisor/fd_budget.h"
#include "rpmemd/supervisor/logging.h"
#include "rpmemd/supervisor/pool_store.h"
#include "rpmemd/supervisor/systemd_notify.h"
#include "rpmemd/supervisor/worker_pool.h"
#include "rpmemd/worker/worker_main.h"

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "unknown"
#endif

namespace {

using namespace rpmem::daemon;

int report(const rpmem::Error& error) {
    std::fprintf(stderr, "rpmemd: %s\n", error.message().c_str());
    return error.errno_value() > 0 ? error.errno_value() : EINVAL;
}

// Read once, here at the edge: where $HOME is and where the config files live.
ConfigSources config_sources() {
    ConfigSources sources;
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        sources.home = home;
    } else if (const passwd* user = ::getpwuid(::geteuid()); user != nullptr) {
        sources.home = user->pw_dir;
    }
    if (!sources.home.empty())
        sources.user_file = sources.home + "/.rpmemd.conf";
    return sources;
}

rpmem::Result<void> write_port_file(const std::string& path, std::uint16_t port) {
    // A plain open, not a rename into place: the file may be a pipe a test waits on.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return rpmem::fail(rpmem::Error::from_errno(errno, "opening port file " + path));
    std::string line = fmt::format("{}\n", port);
    ssize_t written = ::write(fd, line.data(), line.size());
    int error = errno;
    ::close(fd);
    if (written != static_cast<ssize_t>(line.size()))
        return rpmem::fail(
            rpmem::Error::from_errno(written < 0 ? error : EIO, "writing port file " + path));
    return {};
}

int remove_pool(const Config& config, const CommandLine& command_line) {
    PoolStore store(config.poolset_dir, config.client_poolset_dirs, default_resolve_method(),
                    config.tenancy);
    auto removed = store.remove({}, command_line.remove_set,
                                {command_line.force, command_line.remove_pool_set});
    if (!removed)
        return report(removed.error());
    spdlog::info("removed pool set '{}' beneath {}", command_line.remove_set, config.poolset_dir);
    return 0;
}

// Where the workers come from and as whom they run.
rpmem::Result<WorkerLaunch> worker_launch(const Config& config) {
    WorkerLaunch launch;
    auto image = WorkerImage::open_running();
    if (!image)
        return rpmem::fail(std::move(image.error()));
    launch.image = std::make_shared<const WorkerImage>(std::move(*image));
    launch.version = RPMEM_VERSION;
    auto level = spdlog::level::to_string_view(spdlog::default_logger()->level());
    launch.log_level.assign(level.data(), level.size());
    launch.sandbox = config.worker_sandbox;
    launch.responders = config.nthreads;
    if (!config.worker_sandbox)
        spdlog::warn("worker-sandbox = no: data-path workers run without their sandbox");
    if (::geteuid() != 0) {
        if (!config.worker_user.empty() || !config.worker_group.empty())
            spdlog::warn("user and group take effect only when rpmemd starts as root");
        return launch;
    }
    // As root, workers never keep root: they need no file access of their own.
    std::string user = config.worker_user.empty() ? "nobody" : config.worker_user;
    std::string group_name = config.worker_group.empty() ? "nogroup" : config.worker_group;
    auto uid = resolve_user(user);
    if (!uid)
        return rpmem::fail(std::move(uid.error()).add_context("the workers' user"));
    auto gid = resolve_group(group_name);
    if (!gid)
        return rpmem::fail(std::move(gid.error()).add_context("the workers' group"));
    launch.uid = *uid;
    launch.gid = *gid;
    if (*launch.uid == 0)
        spdlog::warn("user = {}: data-path workers keep root", user);
    return launch;
}

int serve(const Config& config) {
    // Block the stop signals in every thread (the ones started below inherit the mask), and
    // take them with sigwait here. A peer closing a socket must not kill the daemon.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    std::string notify_socket;
    if (const char* socket = std::getenv("NOTIFY_SOCKET"); socket != nullptr)
        notify_socket = socket;

    check_fd_budget(config); // before the first connection needs a descriptor
    auto launch = worker_launch(config);
    if (!launch)
        return report(launch.error());
    // Declared before the daemon: its sessions' data planes live in these workers.
    WorkerPool workers(std::move(*launch));
    auto daemon = Daemon::start(
        config, [&workers](const DataPlaneRequest& request) { return workers.start(request); },
        [&workers] { return workers.worker_count(); });
    if (!daemon)
        return report(daemon.error());
    for (auto [path, port] : {std::pair{&config.port_file, (*daemon)->port()},
                              std::pair{&config.metrics_port_file, (*daemon)->metrics_port()}}) {
        if (path->empty())
            continue;
        if (auto written = write_port_file(*path, port); !written)
            return report(written.error());
    }
    if (!notify_systemd(notify_socket, "READY=1"))
        spdlog::warn("could not notify systemd at {}", notify_socket);

    int signal = 0;
    while (sigwait(&stop_signals, &signal) != 0) {
    }
    spdlog::info("rpmemd stopping on signal {}", signal);
    (void)notify_systemd(notify_socket, "STOPPING=1");
    (*daemon)->stop();
    daemon->reset();
    spdlog::info("rpmemd stopped");
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    // A worker ends with _exit: LeakSanitizer's exit-time scan needs ptrace, which its
    // sandbox refuses (run_worker has released everything by then).
    if (argc >= 2 && std::string_view(argv[1]) == "--worker")
        ::_exit(run_worker(argc, argv));
    start_logging();
    auto command_line = parse_command_line(argc, argv);
    if (!command_line)
        return report(command_line.error());
    switch (command_line->mode) {
    case CommandLine::Mode::help:
        std::fputs(usage_text().c_str(), stdout);
        return 0;
    case CommandLine::Mode::version:
        std::puts("rpmemd " RPMEM_VERSION);
        return 0;
    case CommandLine::Mode::remove:
    case CommandLine::Mode::serve:
        break;
    }
    auto config = load_config(*command_line, config_sources());
    if (!config)
        return report(config.error());
    if (auto logging = configure_logging(*config); !logging)
        return report(logging.error());
    if (command_line->mode == CommandLine::Mode::remove)
        return remove_pool(*config, *command_line);
    return serve(*config);
}
