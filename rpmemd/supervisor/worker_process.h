// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "base/error.h"
#include "base/unique_fd.h"
#include "protocol/worker_message.h"
#include "rpmemd/boundary/packet_socket.h"
#include "rpmemd/supervisor/worker_image.h"

namespace rpmem::daemon {

// How the supervisor starts its workers.
struct WorkerLaunch {
    std::shared_ptr<const WorkerImage> image; // rpmemd itself, held open since start
    std::string version;                      // the supervisor's; the worker must match it
    std::string log_level = "warning";        // spdlog's level name
    std::optional<uid_t> uid;                 // drop to these in the worker (config user/group)
    std::optional<gid_t> gid;
    bool sandbox = true; // false only for debugging (config key)
    // The worker may map pool parts from offset 0 (SandboxOptions::map_part_starts): set per
    // worker by WorkerPool, for pool sets whose later parts have no header.
    bool map_part_starts = false;
    unsigned responders = 0; // responder threads at most (config nthreads); 0: one per CPU
    std::chrono::milliseconds reply_timeout{10'000}; // a worker slower than this is killed
};

// The supervisor's environment as a worker gets it (NAME=value entries): only the variables
// of the libraries it runs (libfabric's FI_*, libpmem's PMEM_*, the sanitizers' options, the
// dynamic loader's LD_LIBRARY_PATH and LD_PRELOAD) and the failpoints of a test build.
std::vector<std::string> worker_environment(char** environment);

// One data-path worker process as the supervisor sees it: spawned (posix_spawn of
// `rpmemd --worker` from the held image, its own process group, an empty signal mask, and
// only the environment worker_environment() keeps), greeted (a WorkerHello each way: a worker
// of another version is refused, and ends when its socket closes), its socket, and a monitor
// thread that relays the worker's log lines (escaped, at their level, under the worker's
// name) until the worker exits, then reaps it and reports why it ended (exit status or
// signal) to the ExitObserver, once. call() is thread-safe and serialised: one request and its
// answer at a time. Destroying it closes the socket (the worker exits at end of stream), waits
// a bounded time for the exit, kills the worker if it is still there, and reaps it.
class WorkerProcess {
public:
    using ExitObserver = std::function<void(const Error& why)>;

    // `name` (e.g. "worker for 'alice'") prefixes its log lines and errors. `on_exit` hears
    // of the end of a worker that spawn() returned, never of one whose start failed.
    static Result<std::unique_ptr<WorkerProcess>> spawn(const WorkerLaunch& launch,
                                                        std::string name, ExitObserver on_exit);

    ~WorkerProcess();
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    // Sends `request` (with `fds` as SCM_RIGHTS) and returns the answer. A worker that does
    // not answer within the reply timeout, or answers nonsense, is killed: it can no longer be
    // trusted to have fenced anything. ECONNRESET naming the worker and its end when it died.
    Result<protocol::WorkerMessage> call(const protocol::WorkerMessage& request,
                                         std::span<const int> fds = {});

    // SIGKILL, then waits until it is reaped. Idempotent.
    void kill() noexcept;

    bool exited() const;
    pid_t pid() const noexcept { return pid_; }
    const std::string& name() const noexcept { return name_; }

private:
    WorkerProcess(std::string name, pid_t pid, PacketSocket socket, UniqueFd log,
                  std::chrono::milliseconds reply_timeout, ExitObserver on_exit);
    void monitor() noexcept;
    // The first exchange: our version out, the worker's back; a mismatch fails the start.
    Result<void> greet(const std::string& version);
    bool wait_exit(std::chrono::milliseconds timeout);
    Error death_error() const;

    const std::string name_;
    const pid_t pid_;
    const std::chrono::milliseconds reply_timeout_;
    ExitObserver on_exit_;

    std::mutex call_mutex_; // one request at a time on the socket
    std::optional<PacketSocket> socket_;

    mutable std::mutex state_mutex_;
    std::condition_variable exited_changed_;
    bool exited_ = false;
    std::string exit_reason_; // "killed by signal 11 (Segmentation fault)"
    bool observed_ = false;   // greeted: its exit goes to on_exit_

    UniqueFd log_;
    std::thread monitor_;
};

} // namespace rpmem::daemon
