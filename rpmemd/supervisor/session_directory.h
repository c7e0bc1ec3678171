// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channel/session_handler.h"
#include "protocol/data_path_counters.h"
#include "protocol/session_status.h"

namespace rpmem::daemon {

using protocol::DataPathCounters;

// The sessions rpmemd has open, as status and metrics show them: who, since when, which pool
// set with which data path, the replica's state, the initiator's resync. Each DaemonSession
// keeps its row up to date through its Listing; readers take copies. Owned by the Daemon;
// thread-safe.
class SessionDirectory {
public:
    using Clock = std::function<std::chrono::steady_clock::time_point()>;

    explicit SessionDirectory(Clock now = [] { return std::chrono::steady_clock::now(); });

    // One session's row, removed when the Listing goes. Owned by its DaemonSession, which
    // calls it from one thread at a time.
    class Listing {
    public:
        Listing(Listing&& other) noexcept;
        Listing& operator=(Listing&&) = delete;
        Listing(const Listing&) = delete;
        ~Listing();

        // A pool is open with this data path (the fields of `pool` that describe it).
        void set_pool(const protocol::SessionStatus& pool);
        void set_state(protocol::ReplicaState state, std::uint64_t generation);
        // The pool is closed: its counters are read a last time and kept in the totals.
        void clear_pool();
        void set_resync(bool active, std::uint64_t done_bytes, std::uint64_t total_bytes);
        // Where the data path's counters come from while the pool is open. The source may be
        // called after clear_pool() began, from another thread: it must own what it reads.
        void set_counters(std::function<std::optional<DataPathCounters>()> source);

    private:
        friend class SessionDirectory;
        Listing(SessionDirectory* directory, std::uint64_t id)
            : directory_(directory)
            , id_(id) {}
        SessionDirectory* directory_;
        std::uint64_t id_;
    };

    Listing add(const channel::PeerInfo& peer);

    struct Snapshot {
        std::vector<protocol::SessionStatus> sessions; // by session id
        // Of every session since the daemon started (also those listed, visible or not), for
        // the monotonic counters of /metrics.
        DataPathCounters totals;
    };
    // The sessions of the identities `visible` accepts (all when empty).
    Snapshot snapshot(const std::function<bool(std::string_view identity)>& visible = {}) const;
    std::size_t size() const;

private:
    struct Row {
        protocol::SessionStatus status;
        std::chrono::steady_clock::time_point since;
        std::function<std::optional<DataPathCounters>()> counters;
    };
    template <typename Change>
    void change(std::uint64_t id, Change change);

    const Clock now_;
    mutable std::mutex mutex_;
    std::map<std::uint64_t, Row> rows_; // under mutex_
    DataPathCounters retired_;          // under mutex_: of data paths already closed
};

} // namespace rpmem::daemon
