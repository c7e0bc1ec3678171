// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/error.h"
#include "rpmemd/data_plane.h"
#include "rpmemd/worker/worker_process.h"

namespace rpmem::daemon {

// The supervisor's data planes: each client identity's sessions are served by one worker
// process of that identity (its trust domain), started with the identity's first session and
// ended with its last one. start() is rpmemd's DataPlaneFactory: it passes the session's pool
// part descriptors to the worker, which maps and registers the pool's data (never its header)
// and runs the fabric target there; stop() of the returned DataPlane fences in the worker (or
// kills it) before it returns. A worker that dies ends only its own identity's sessions: each
// gets its on_lost call with the worker's exit reason, and the identity's next session starts
// a new worker. Thread-safe.
class WorkerPool {
public:
    explicit WorkerPool(WorkerLaunch launch)
        : launch_(std::move(launch)) {}
    ~WorkerPool() = default; // every data plane it made must be stopped and gone first

    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    Result<std::unique_ptr<DataPlane>> start(const DataPlaneRequest& request);

    // Workers running now (for status and tests).
    std::size_t worker_count() const;

    class Worker; // one identity's process and the sessions it serves
private:
    friend class WorkerDataPlane;
    void forget(const std::shared_ptr<Worker>& worker, std::uint64_t session);
    void on_worker_exit(const std::string& identity, const Worker* worker, const Error& why);

    const WorkerLaunch launch_;
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Worker>> by_identity_; // only workers with sessions
    std::uint64_t next_session_ = 1;
};

} // namespace rpmem::daemon
