// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/session_directory.h"

namespace rpmem::daemon {

SessionDirectory::SessionDirectory(Clock now)
    : now_(std::move(now)) {}

template <typename Change>
void SessionDirectory::change(std::uint64_t id, Change change) {
    std::lock_guard lock(mutex_);
    if (auto row = rows_.find(id); row != rows_.end())
        change(row->second);
}

SessionDirectory::Listing SessionDirectory::add(const channel::PeerInfo& peer) {
    Row row;
    row.status.id = peer.session_id;
    row.status.identity = peer.identity;
    row.status.peer = channel::endpoint_text(peer);
    row.since = now_();
    std::lock_guard lock(mutex_);
    rows_.insert_or_assign(peer.session_id, std::move(row));
    return Listing(this, peer.session_id);
}

SessionDirectory::Snapshot
SessionDirectory::snapshot(const std::function<bool(std::string_view identity)>& visible) const {
    Snapshot snapshot;
    std::vector<std::function<std::optional<DataPathCounters>()>> sources;
    std::vector<std::size_t> listed; // index into sessions, or npos: counted, not listed
    {
        std::lock_guard lock(mutex_);
        snapshot.totals = retired_;
        const auto now = now_();
        for (const auto& [id, row] : rows_) {
            const bool show = !visible || visible(row.status.identity);
            if (show) {
                snapshot.sessions.push_back(row.status);
                snapshot.sessions.back().connected_ms = static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(now - row.since).count());
            }
            if (row.counters) {
                sources.push_back(row.counters);
                listed.push_back(show ? snapshot.sessions.size() - 1 : std::string::npos);
            }
        }
    }
    // The counters may ask another process: outside the lock, so a slow answer holds nobody.
    for (std::size_t i = 0; i < sources.size(); ++i) {
        auto counters = sources[i]();
        if (!counters)
            continue;
        snapshot.totals.add(*counters);
        if (listed[i] == std::string::npos)
            continue;
        protocol::SessionStatus& session = snapshot.sessions[listed[i]];
        session.persists = counters->persists;
        session.persisted_bytes = counters->persisted_bytes;
        session.latency_p50_ns = counters->latency.quantile_upper_bound_ns(0.5);
        session.latency_p99_ns = counters->latency.quantile_upper_bound_ns(0.99);
        session.ordered_messages = counters->ordered_messages;
        session.lag_bytes = counters->lag_bytes;
        session.max_lag_bytes = counters->max_lag_bytes;
    }
    return snapshot;
}

std::size_t SessionDirectory::size() const {
    std::lock_guard lock(mutex_);
    return rows_.size();
}

SessionDirectory::Listing::Listing(Listing&& other) noexcept
    : directory_(std::exchange(other.directory_, nullptr))
    , id_(other.id_) {}

SessionDirectory::Listing::~Listing() {
    if (directory_ == nullptr)
        return;
    std::lock_guard lock(directory_->mutex_);
    directory_->rows_.erase(id_);
}

void SessionDirectory::Listing::set_pool(const protocol::SessionStatus& pool) {
    directory_->change(id_, [&](Row& row) {
        row.status.pool_set = pool.pool_set;
        row.status.provider = pool.provider;
        row.status.persist_method = pool.persist_method;
        row.status.method_reason = pool.method_reason;
        row.status.lanes = pool.lanes;
        row.status.state = pool.state;
        row.status.generation = pool.generation;
    });
}

void SessionDirectory::Listing::set_state(protocol::ReplicaState state, std::uint64_t generation) {
    directory_->change(id_, [&](Row& row) {
        row.status.state = state;
        row.status.generation = generation;
    });
}

void SessionDirectory::Listing::clear_pool() {
    std::function<std::optional<DataPathCounters>()> source;
    directory_->change(id_, [&](Row& row) { source = row.counters; });
    std::optional<DataPathCounters> last = source ? source() : std::nullopt;
    directory_->change(id_, [&](Row& row) {
        if (last)
            directory_->retired_.add(*last);
        protocol::SessionStatus cleared;
        cleared.id = row.status.id;
        cleared.identity = std::move(row.status.identity);
        cleared.peer = std::move(row.status.peer);
        row.status = std::move(cleared);
        row.counters = nullptr;
    });
}

void SessionDirectory::Listing::set_resync(bool active, std::uint64_t done_bytes,
                                           std::uint64_t total_bytes) {
    directory_->change(id_, [&](Row& row) {
        row.status.resync_active = active;
        row.status.resync_done_bytes = done_bytes;
        row.status.resync_total_bytes = total_bytes;
    });
}

void SessionDirectory::Listing::set_counters(
    std::function<std::optional<DataPathCounters>()> source) {
    directory_->change(id_, [&](Row& row) { row.counters = std::move(source); });
}

} // namespace rpmem::daemon
