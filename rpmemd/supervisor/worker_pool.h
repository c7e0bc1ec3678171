// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "rpmemd/boundary/data_plane.h"
#include "rpmemd/supervisor/worker_process.h"

namespace rpmem::daemon {

// The supervisor's data planes: each client identity's sessions are served by one worker
// process of that identity (its trust domain), started with the identity's first session and
// ended kWorkerLinger after its last one (so that a create-or-open workload does not pay a
// process start per session). start() is rpmemd's DataPlaneFactory: it passes the session's pool
// part descriptors to the worker, which maps and registers the pool's data (never its header)
// and runs the fabric target there; stop() of the returned DataPlane fences in the worker (or
// kills it) before it returns. A worker that dies ends only its own identity's sessions: each
// gets its on_lost call with the worker's exit reason, and the identity's next session starts
// a new worker. An identity with pool sets whose later parts have no header (SINGLEHDR,
// NOHDRS, in more than one part) gets a second worker for those: only it may map a part from
// offset 0, which elsewhere the sandbox refuses to keep headers out of reach. Thread-safe.
class WorkerPool {
public:
    explicit WorkerPool(WorkerLaunch launch)
        : launch_(std::move(launch)) {}
    ~WorkerPool(); // every data plane it made must be stopped and gone first

    static constexpr std::chrono::seconds kWorkerLinger{10};

    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    Result<std::unique_ptr<DataPlane>> start(const DataPlaneRequest& request);

    // Workers running now (for status and tests).
    std::size_t worker_count() const;

    class Worker; // one identity's process and the sessions it serves
private:
    friend class WorkerDataPlane;
    void forget(const std::shared_ptr<Worker>& worker, std::uint64_t session);
    // A worker is one identity's, for pool sets that need part starts mapped or not.
    using WorkerKey = std::pair<std::string, bool>;
    void on_worker_exit(const WorkerKey& key, const Worker* worker, const Error& why);
    // Ends the workers idle for longer than kWorkerLinger and those already dead, outside the
    // lock (ending one waits for its exit).
    void sweep();

    const WorkerLaunch launch_;
    mutable std::mutex mutex_;
    std::map<WorkerKey, std::shared_ptr<Worker>> by_key_; // live workers, busy or idle
    // Dead workers taken out of the map on their monitor thread, which must not end them.
    std::vector<std::shared_ptr<Worker>> graveyard_;
    std::uint64_t next_session_ = 1;
};

} // namespace rpmem::daemon
