// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/worker/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/log_text.h"

namespace rpmem::daemon {

class WorkerPool::Worker {
public:
    std::unique_ptr<WorkerProcess> process;
    // Session -> what to call when the worker dies under it. Guarded by the pool's mutex.
    std::map<std::uint64_t, std::function<void(const Error&)>> sessions;
    std::chrono::steady_clock::time_point idle_since; // when `sessions` became empty
};

// A session's data plane in a worker: the worker's description of it, and the way to end it.
class WorkerDataPlane final : public DataPlane {
public:
    WorkerDataPlane(WorkerPool& pool, std::shared_ptr<WorkerPool::Worker> worker,
                    std::uint64_t session, std::string name, DataPlaneInfo info)
        : pool_(pool)
        , worker_(std::move(worker))
        , session_(session)
        , name_(std::move(name))
        , info_(std::move(info)) {}
    ~WorkerDataPlane() override { stop(); }

    const DataPlaneInfo& info() const noexcept override { return info_; }

    void stop() noexcept override {
        if (stopped_.exchange(true))
            return;
        WorkerProcess& process = *worker_->process;
        // Fenced means: the worker has disconnected the lanes and unmapped the pool, or the
        // worker is gone. A worker that cannot confirm it is killed.
        if (!process.exited()) {
            auto stopped = process.call(protocol::WorkerStop{session_});
            bool confirmed = stopped && std::holds_alternative<protocol::WorkerStopped>(*stopped) &&
                             std::get<protocol::WorkerStopped>(*stopped).session_id == session_;
            if (!confirmed && !process.exited()) {
                spdlog::error("{}: the {} did not confirm the fence ({}): killing it", name_,
                              process.name(), stopped ? "wrong answer" : stopped.error().message());
                process.kill();
            }
        }
        pool_.forget(worker_, session_);
        worker_.reset();
        spdlog::debug("{}: data plane stopped", name_);
    }

private:
    WorkerPool& pool_;
    std::shared_ptr<WorkerPool::Worker> worker_;
    const std::uint64_t session_;
    const std::string name_;
    const DataPlaneInfo info_;
    std::atomic<bool> stopped_{false};
};

WorkerPool::~WorkerPool() {
    std::map<std::string, std::shared_ptr<Worker>> workers;
    std::vector<std::shared_ptr<Worker>> dead;
    {
        const std::lock_guard lock(mutex_);
        workers.swap(by_identity_);
        dead.swap(graveyard_);
    }
    // Ended here, unlocked: their exit reaches on_worker_exit, which finds nothing to do.
}

void WorkerPool::sweep() {
    std::vector<std::shared_ptr<Worker>> ending;
    {
        const std::lock_guard lock(mutex_);
        ending.swap(graveyard_);
        const auto now = std::chrono::steady_clock::now();
        for (auto it = by_identity_.begin(); it != by_identity_.end();) {
            if (it->second->sessions.empty() && now - it->second->idle_since >= kWorkerLinger) {
                ending.push_back(std::move(it->second));
                it = by_identity_.erase(it);
            } else {
                ++it;
            }
        }
    }
}

Result<std::unique_ptr<DataPlane>> WorkerPool::start(const DataPlaneRequest& request) {
    sweep();
    if (request.pool == nullptr)
        return fail(EINVAL, request.session_name + ": starting the data plane: no pool");
    const poolset::PoolMapping& mapping = *request.pool;

    protocol::WorkerStart start;
    start.session_name = request.session_name;
    start.token = request.token;
    start.provider = request.provider;
    start.allowed_providers = request.allowed_providers;
    start.bind_host = request.bind_host;
    start.lanes = request.lanes;
    start.pool_size = mapping.size();
    start.data_offset = request.protected_prefix;
    start.is_pmem = mapping.is_pmem();
    start.responder_spin_ns = static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, std::chrono::nanoseconds(request.responder_spin).count()));
    start.responder_cpu = request.responder_cpu;
    std::vector<int> fds;
    std::map<std::size_t, std::uint32_t> fd_index; // part -> index in fds
    for (const poolset::PoolMapping::Segment& segment : mapping.segments()) {
        auto [slot, added] = fd_index.emplace(segment.part, static_cast<std::uint32_t>(fds.size()));
        if (added)
            fds.push_back(mapping.part_fd(segment.part));
        start.segments.push_back(
            {slot->second, segment.file_offset, segment.length, segment.pool_offset});
    }
    if (request.counters) {
        start.counters_page = true;
        fds.push_back(request.counters->fd());
    }

    std::shared_ptr<Worker> worker;
    {
        const std::lock_guard lock(mutex_);
        start.session_id = next_session_++;
        auto& slot = by_identity_[request.identity];
        if (!slot) {
            auto made = std::make_shared<Worker>();
            auto process = WorkerProcess::spawn(
                launch_, fmt::format("worker for '{}'", escape_for_log(request.identity)),
                [this, identity = request.identity, raw = made.get()](const Error& why) {
                    on_worker_exit(identity, raw, why);
                });
            if (!process) {
                by_identity_.erase(request.identity);
                return fail(std::move(process.error()).add_context(request.session_name));
            }
            made->process = std::move(*process);
            slot = std::move(made);
        }
        worker = slot;
        // No loss to report until the data plane exists: a start that fails says so itself.
        worker->sessions.emplace(start.session_id, nullptr);
    }

    auto reply = worker->process->call(start, fds);
    protocol::WorkerStarted* started =
        reply ? std::get_if<protocol::WorkerStarted>(&*reply) : nullptr;
    if (reply && (started == nullptr || started->session_id != start.session_id)) {
        worker->process->kill();
        reply = fail(EPROTO, fmt::format("the {} answered out of turn", worker->process->name()),
                     ErrorSource::protocol);
    }
    if (!reply || started->errno_value != 0) {
        Error error = reply ? Error(static_cast<int>(started->errno_value), started->message)
                            : std::move(reply.error());
        forget(worker, start.session_id);
        return fail(std::move(error));
    }

    {
        const std::lock_guard lock(mutex_);
        auto found = by_identity_.find(request.identity);
        if (found == by_identity_.end() || found->second != worker) {
            // It died right after answering: the loss was reported before we could listen.
            worker->sessions.erase(start.session_id);
            return fail(ECONNRESET,
                        fmt::format("{}: the {} ended while starting the data plane",
                                    request.session_name, worker->process->name()),
                        ErrorSource::system);
        }
        worker->sessions[start.session_id] = request.on_lost;
    }

    DataPlaneInfo info;
    info.path = started->data_path;
    info.path.lanes = std::min<std::uint32_t>(info.path.lanes, request.lanes);
    info.traits = {.software = started->software_provider,
                   .offers_rma_pmem = started->offers_rma_pmem};
    return std::unique_ptr<DataPlane>(std::make_unique<WorkerDataPlane>(
        *this, std::move(worker), start.session_id, request.session_name, std::move(info)));
}

void WorkerPool::forget(const std::shared_ptr<Worker>& worker, std::uint64_t session) {
    {
        const std::lock_guard lock(mutex_);
        worker->sessions.erase(session);
        if (worker->sessions.empty())
            worker->idle_since = std::chrono::steady_clock::now();
    }
    sweep();
}

void WorkerPool::on_worker_exit(const std::string& identity, const Worker* worker,
                                const Error& why) {
    std::vector<std::function<void(const Error&)>> lost;
    {
        const std::lock_guard lock(mutex_);
        auto found = by_identity_.find(identity);
        if (found != by_identity_.end() && found->second.get() == worker) {
            for (auto& [session, on_lost] : found->second->sessions) {
                if (on_lost)
                    lost.push_back(on_lost);
            }
            // Not ended here (this is its monitor thread): the next sweep does.
            graveyard_.push_back(std::move(found->second));
            by_identity_.erase(found);
        }
    }
    for (auto& on_lost : lost)
        on_lost(why);
}

std::size_t WorkerPool::worker_count() const {
    const std::lock_guard lock(mutex_);
    return by_identity_.size();
}

} // namespace rpmem::daemon
