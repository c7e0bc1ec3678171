// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/log_text.h"
#include "rpmemd/boundary/worker_contract.h"

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
    std::map<WorkerKey, std::shared_ptr<Worker>> workers;
    std::vector<std::shared_ptr<Worker>> dead;
    {
        const std::lock_guard lock(mutex_);
        workers.swap(by_key_);
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
        for (auto it = by_key_.begin(); it != by_key_.end();) {
            if (it->second->sessions.empty() && now - it->second->idle_since >= kWorkerLinger) {
                ending.push_back(std::move(it->second));
                it = by_key_.erase(it);
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
    start.reply_delay_ns = static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, std::chrono::nanoseconds(request.reply_delay).count()));
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
    // A segment whose mapping would begin in a part's first page: a headerless later part.
    const bool maps_part_starts = std::ranges::any_of(start.segments, [&](const auto& segment) {
        const std::uint64_t skip =
            segment.pool_offset < start.data_offset
                ? std::min(segment.length, start.data_offset - segment.pool_offset)
                : 0;
        return skip < segment.length && segment.file_offset + skip < kHeaderGuard;
    });
    const WorkerKey key{request.identity, maps_part_starts};

    std::shared_ptr<Worker> worker;
    {
        const std::lock_guard lock(mutex_);
        start.session_id = next_session_++;
        auto& slot = by_key_[key];
        if (!slot) {
            auto made = std::make_shared<Worker>();
            WorkerLaunch launch = launch_;
            launch.map_part_starts = maps_part_starts;
            auto process = WorkerProcess::spawn(
                launch,
                fmt::format("{}worker for '{}'", maps_part_starts ? "headerless-parts " : "",
                            escape_for_log(request.identity)),
                [this, key, raw = made.get()](const Error& why) { on_worker_exit(key, raw, why); });
            if (!process) {
                by_key_.erase(key);
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
        auto found = by_key_.find(key);
        if (found == by_key_.end() || found->second != worker) {
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

void WorkerPool::on_worker_exit(const WorkerKey& key, const Worker* worker, const Error& why) {
    std::vector<std::function<void(const Error&)>> lost;
    {
        const std::lock_guard lock(mutex_);
        auto found = by_key_.find(key);
        if (found != by_key_.end() && found->second.get() == worker) {
            for (auto& [session, on_lost] : found->second->sessions) {
                if (on_lost)
                    lost.push_back(on_lost);
            }
            // Not ended here (this is its monitor thread): the next sweep does.
            graveyard_.push_back(std::move(found->second));
            by_key_.erase(found);
        }
    }
    for (auto& on_lost : lost)
        on_lost(why);
}

std::size_t WorkerPool::worker_count() const {
    const std::lock_guard lock(mutex_);
    return by_key_.size();
}

} // namespace rpmem::daemon
