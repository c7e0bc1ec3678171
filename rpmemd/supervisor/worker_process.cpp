// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/worker_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iterator>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log_text.h"
#include "rpmemd/boundary/worker_contract.h"

extern char** environ;

namespace rpmem::daemon {

namespace {

constexpr std::size_t kMaxLogLine = 2048;
constexpr std::chrono::milliseconds kExitWait{5'000};

spdlog::level::level_enum level_of(char letter) {
    switch (letter) {
    case 'T':
        return spdlog::level::trace;
    case 'D':
        return spdlog::level::debug;
    case 'I':
        return spdlog::level::info;
    case 'W':
        return spdlog::level::warn;
    case 'C':
        return spdlog::level::critical;
    default:
        return spdlog::level::err;
    }
}

std::string describe_status(int status) {
    if (WIFEXITED(status))
        return fmt::format("exited with status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                           ::strsignal(WTERMSIG(status)));
    return fmt::format("ended with wait status {:#x}", status);
}

// posix_spawn's attributes and file actions, freed on every path.
struct SpawnSetup {
    posix_spawnattr_t attributes{};
    posix_spawn_file_actions_t actions{};
    SpawnSetup() {
        posix_spawnattr_init(&attributes);
        posix_spawn_file_actions_init(&actions);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;
};

} // namespace

std::vector<std::string> worker_environment(char** environment) {
    // What the worker's libraries read: libfabric (FI_*), libpmem (PMEM_*), the sanitizers,
    // the dynamic loader (the worker loads its libraries as the supervisor did), and the
    // failpoints of a test build. Not HOME, PATH, credentials or anything else of the caller.
    static constexpr std::string_view kPrefixes[] = {"FI_", "PMEM_"};
    static constexpr std::string_view kNames[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS",
                                                  "LSAN_OPTIONS", "LD_LIBRARY_PATH",
                                                  "LD_PRELOAD",   "RPMEM_FAILPOINT"};
    std::vector<std::string> kept;
    for (char** entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
        const std::string_view variable(*entry);
        const std::string_view name = variable.substr(0, variable.find('='));
        if (name.size() == variable.size())
            continue;
        const bool wanted =
            std::ranges::any_of(kPrefixes, [&](auto prefix) { return name.starts_with(prefix); }) ||
            std::ranges::find(kNames, name) != std::end(kNames);
        if (wanted)
            kept.emplace_back(variable);
    }
    return kept;
}

Result<std::unique_ptr<WorkerProcess>>
WorkerProcess::spawn(const WorkerLaunch& launch, std::string name, ExitObserver on_exit) {
    auto sockets = PacketSocket::pair();
    if (!sockets)
        return fail(std::move(sockets.error()).add_context("starting the " + name));
    int log_pipe[2] = {-1, -1};
    if (::pipe2(log_pipe, O_CLOEXEC) != 0)
        return fail(Error::from_errno(errno, "starting the " + name + ": its log pipe"));
    UniqueFd log_read(log_pipe[0]);
    UniqueFd log_write(log_pipe[1]);

    std::vector<std::string> args{launch.image->display_path(), "--worker", "--log-level",
                                  launch.log_level};
    if (launch.uid) {
        args.insert(args.end(), {"--uid", std::to_string(*launch.uid)});
    }
    if (launch.gid) {
        args.insert(args.end(), {"--gid", std::to_string(*launch.gid)});
    }
    if (!launch.sandbox)
        args.emplace_back("--no-sandbox");
    if (launch.map_part_starts)
        args.emplace_back("--map-part-starts");
    if (launch.responders != 0)
        args.insert(args.end(), {"--responders", std::to_string(launch.responders)});
    std::vector<char*> argv;
    for (std::string& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);

    SpawnSetup setup;
    // Only the worker socket and the log pipe cross over (dup2 clears close-on-exec on the
    // copies; everything else of the supervisor is close-on-exec or closed by the sandbox).
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&setup.actions, log_write.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&setup.actions, log_write.get(), STDERR_FILENO);
    posix_spawn_file_actions_adddup2(&setup.actions, sockets->second.fd(), kWorkerSocketFd);
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int signal : {SIGINT, SIGTERM, SIGPIPE, SIGHUP})
        sigaddset(&defaults, signal);
    posix_spawnattr_setsigmask(&setup.attributes, &none);
    posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
    // Its own process group: a terminal's Ctrl-C reaches the supervisor, which ends workers in
    // order; a dead supervisor ends them through PR_SET_PDEATHSIG.
    posix_spawnattr_setpgroup(&setup.attributes, 0);
    posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                    POSIX_SPAWN_SETPGROUP);
    std::vector<std::string> variables = worker_environment(environ);
    std::vector<char*> envp;
    for (std::string& variable : variables)
        envp.push_back(variable.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    // The image's descriptor as the child sees it, between its file actions and exec: the
    // path is never walked, so neither its directories' permissions nor a newer file there
    // matter.
    const std::string image = launch.image->exec_path();
    int spawned = ::posix_spawn(&pid, image.c_str(), &setup.actions, &setup.attributes, argv.data(),
                                envp.data());
    if (spawned != 0)
        return fail(Error::from_errno(
            spawned, fmt::format("starting the {} ({})", name, launch.image->display_path())));
    log_write.reset();
    sockets->second.release().reset(); // the worker's end lives on in the worker only

    std::unique_ptr<WorkerProcess> process(
        new WorkerProcess(std::move(name), pid, std::move(sockets->first), std::move(log_read),
                          launch.reply_timeout, std::move(on_exit)));
    process->monitor_ = std::thread([raw = process.get()] { raw->monitor(); });
    if (auto greeted = process->greet(launch.version); !greeted)
        return fail(std::move(greeted.error()).add_context("starting the " + process->name_));
    {
        // Only a greeted worker's end is the observer's news; one that is already gone is a
        // start that failed. (The observer may take the lock our caller holds: it must never
        // run while this start is failing and joining the monitor.)
        const std::lock_guard lock(process->state_mutex_);
        if (process->exited_)
            return fail(
                Error(ECONNRESET,
                      fmt::format("starting the {}: it {}", process->name_, process->exit_reason_),
                      ErrorSource::system, ECONNRESET));
        process->observed_ = true;
    }
    spdlog::info("{} started (pid {})", process->name_, pid);
    return process;
}

Result<void> WorkerProcess::greet(const std::string& version) {
    auto reply = call(protocol::WorkerHello{version});
    if (!reply)
        return fail(std::move(reply.error()));
    const auto* hello = std::get_if<protocol::WorkerHello>(&*reply);
    if (hello == nullptr) {
        kill();
        return fail(EPROTO, fmt::format("the {} did not answer its greeting in kind", name_),
                    ErrorSource::protocol);
    }
    if (hello->version != version) {
        // No kill: a worker that sees the mismatch too exits by itself (status 4) once its
        // socket closes, which the caller's destruction of this process does, killing only a
        // worker that does not.
        return fail(EPROTO,
                    fmt::format("the {} is rpmemd '{}', this supervisor rpmemd '{}': the two "
                                "halves of a daemon must be one build",
                                name_, escape_for_log(hello->version), version),
                    ErrorSource::protocol);
    }
    return {};
}

WorkerProcess::WorkerProcess(std::string name, pid_t pid, PacketSocket socket, UniqueFd log,
                             std::chrono::milliseconds reply_timeout, ExitObserver on_exit)
    : name_(std::move(name))
    , pid_(pid)
    , reply_timeout_(reply_timeout)
    , on_exit_(std::move(on_exit))
    , socket_(std::move(socket))
    , log_(std::move(log)) {}

WorkerProcess::~WorkerProcess() {
    {
        const std::lock_guard lock(call_mutex_);
        socket_.reset(); // end of stream: the worker stops its sessions and exits
    }
    if (!wait_exit(kExitWait)) {
        spdlog::warn("{} did not exit within {} ms of its socket closing: killing it", name_,
                     kExitWait.count());
        kill();
    }
    if (monitor_.joinable()) {
        if (monitor_.get_id() == std::this_thread::get_id())
            monitor_.detach(); // the exit observer dropped the last owner
        else
            monitor_.join();
    }
}

bool WorkerProcess::exited() const {
    const std::lock_guard lock(state_mutex_);
    return exited_;
}

bool WorkerProcess::wait_exit(std::chrono::milliseconds timeout) {
    std::unique_lock lock(state_mutex_);
    return exited_changed_.wait_for(lock, timeout, [this] { return exited_; });
}

void WorkerProcess::kill() noexcept {
    if (exited())
        return;
    ::kill(pid_, SIGKILL);
    // SIGKILL cannot be caught: the monitor reaps it as soon as the kernel has torn it down.
    while (!wait_exit(kExitWait))
        spdlog::warn("{} (pid {}) is still not reaped after SIGKILL", name_, pid_);
}

Error WorkerProcess::death_error() const {
    const std::lock_guard lock(state_mutex_);
    if (exited_)
        return Error(ECONNRESET, fmt::format("the {} {}", name_, exit_reason_), ErrorSource::system,
                     ECONNRESET);
    return Error(ECONNRESET, fmt::format("the {} closed its socket", name_), ErrorSource::system,
                 ECONNRESET);
}

Result<protocol::WorkerMessage> WorkerProcess::call(const protocol::WorkerMessage& request,
                                                    std::span<const int> fds) {
    const std::lock_guard lock(call_mutex_);
    if (!socket_ || exited())
        return fail(death_error());
    auto encoded = protocol::encode_worker_message(request);
    if (!encoded)
        return fail(std::move(encoded.error()));
    if (auto sent = socket_->send(*encoded, fds); !sent) {
        if (wait_exit(std::chrono::milliseconds(200)) || sent.error().errno_value() == EPIPE)
            return fail(death_error());
        return fail(std::move(sent.error()).add_context(name_));
    }
    auto packet = socket_->receive(reply_timeout_);
    Result<protocol::WorkerMessage> reply =
        packet ? protocol::decode_worker_message(packet->bytes)
               : Result<protocol::WorkerMessage>(fail(std::move(packet.error())));
    if (!reply) {
        if (reply.error().errno_value() == ECONNRESET) {
            (void)wait_exit(kExitWait); // learn how it ended, for the message
            return fail(death_error());
        }
        spdlog::error("{}: {}: killing it", name_, reply.error().message());
        Error error = std::move(reply.error()).add_context(name_);
        kill();
        return fail(std::move(error));
    }
    return reply;
}

void WorkerProcess::monitor() noexcept {
    std::string pending;
    std::array<char, 4096> chunk{};
    auto emit = [this](std::string_view line) {
        spdlog::level::level_enum level = spdlog::level::err;
        if (line.size() >= 2 && line[1] == '|') {
            level = level_of(line[0]);
            line.remove_prefix(2);
        }
        // A compromised worker must not forge the supervisor's lines.
        spdlog::log(level, "{}: {}", name_, escape_for_log(line, kMaxLogLine));
    };
    for (;;) {
        ssize_t got = ::read(log_.get(), chunk.data(), chunk.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        pending.append(chunk.data(), static_cast<std::size_t>(got));
        std::size_t newline = 0;
        while ((newline = pending.find('\n')) != std::string::npos) {
            emit(std::string_view(pending).substr(0, newline));
            pending.erase(0, newline + 1);
        }
        if (pending.size() > kMaxLogLine) { // a line without end: cut it, do not grow
            emit(pending);
            pending.clear();
        }
    }
    if (!pending.empty())
        emit(pending);

    int status = 0;
    pid_t reaped = -1;
    do {
        reaped = ::waitpid(pid_, &status, 0);
    } while (reaped < 0 && errno == EINTR);
    std::string reason = reaped == pid_
                             ? describe_status(status)
                             : fmt::format("could not be reaped: {}", std::strerror(errno));
    bool clean = reaped == pid_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    bool observed = false;
    {
        const std::lock_guard lock(state_mutex_);
        exited_ = true;
        exit_reason_ = reason;
        observed = observed_;
    }
    exited_changed_.notify_all();
    if (clean)
        spdlog::info("{} (pid {}) {}", name_, pid_, reason);
    else
        spdlog::error("{} (pid {}) {}", name_, pid_, reason);
    if (observed && on_exit_) {
        try {
            on_exit_(death_error());
        } catch (const std::exception& e) {
            spdlog::error("{}: after its exit: {}", name_, e.what());
        }
    }
}

} // namespace rpmem::daemon
