// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "base/target.h"
#include "client/control.h"
#include "client/settings.h"

namespace rpmem::channel {
class Client;
}

namespace rpmem::client {

class LaneSet;

// How rpmem_persist() may reach durability.
enum class PersistMode {
    strict,  // every aligned 8-byte word lands whole (libpmemobj relies on it)
    relaxed, // RPMEM_PERSIST_RELAXED: plain writes allowed
};

// One remote replica of a local pool: the TLS control channel to rpmemd, the session it opened,
// and the lanes (fabric endpoints) persists travel on. Made by create() or open(); close() ends
// the session (the destructor closes too, logging instead of reporting). The lanes are declared
// after the control channel, so they close first.
//
// Thread contract: lanes are the caller's, as in PMDK. Operations on different lanes may run
// concurrently; one lane must not be used by two threads at once. create/open/close/set_attr
// must not race with each other or with data-path calls. After a data-path failure the replica
// is broken and every later data-path call fails with the same errno (sticky errors).
class Replica {
public:
    // Creates the pool described by `pool_set` on `target` and connects `*lanes` lanes at most
    // (in: wanted, out: granted). Without attributes (nullptr or all zero) the remote pool has
    // no headers; with them, offsets below 4096 are the header and not writable.
    static Result<std::unique_ptr<Replica>> create(const Settings& settings, const Target& target,
                                                   std::string_view pool_set,
                                                   std::span<std::byte> pool, unsigned& lanes,
                                                   const PoolAttributes* attributes);
    // Opens the existing pool; `attributes` (when not null) receives the stored ones.
    static Result<std::unique_ptr<Replica>> open(const Settings& settings, const Target& target,
                                                 std::string_view pool_set,
                                                 std::span<std::byte> pool, unsigned& lanes,
                                                 PoolAttributes* attributes);

    ~Replica();
    Replica(const Replica&) = delete;
    Replica& operator=(const Replica&) = delete;

    unsigned lane_count() const noexcept;

    // The data path. Each call checks its lane and range here, once (the initiator's one
    // check: the lanes below trust them), then runs on the lane.
    Result<void> persist(std::size_t offset, std::size_t length, unsigned lane, PersistMode mode);
    // As persist(), and the target flushes to its deepest domain (msync off pmem).
    Result<void> deep_persist(std::size_t offset, std::size_t length, unsigned lane);
    // Starts a persist; durable after the next drain() on the same lane.
    Result<void> flush(std::size_t offset, std::size_t length, unsigned lane, PersistMode mode);
    Result<void> drain(unsigned lane);
    Result<void> read(std::span<std::byte> into, std::size_t offset, unsigned lane);

    Result<void> set_attributes(const PoolAttributes& attributes);
    // Ends the session; afterwards only destruction is allowed. Reports the first error met but
    // always tears everything down.
    Result<void> close();

    // The digests of [offset, offset + length) of the remote pool, one per extent of
    // `extent_size` bytes (a power of two from 4 KiB to 64 MiB; the last extent may be short),
    // as protocol::extent_digests computes them; asked over the control channel in as many
    // DigestRequests as the protocol's limits need. The target refuses ranges outside its pool
    // or inside its header.
    Result<std::vector<std::uint64_t>> digests(std::size_t offset, std::size_t length,
                                               std::size_t extent_size);

private:
    Replica(const Settings& settings, const Target& target, std::string_view pool_set,
            std::span<std::byte> pool);
    static Result<std::unique_ptr<Replica>> start(bool create, const Settings& settings,
                                                  const Target& target, std::string_view pool_set,
                                                  std::span<std::byte> pool, unsigned& lanes,
                                                  const PoolAttributes* create_attributes,
                                                  PoolAttributes* open_attributes);
    Result<void> establish(bool create, unsigned& lanes, const PoolAttributes* create_attributes,
                           PoolAttributes* open_attributes);
    Result<void> check_lane(const char* step, unsigned lane) const;
    Result<void> check_write(const char* step, std::size_t offset, std::size_t length,
                             unsigned lane) const;
    Result<void> check_broken() const;
    // Data-path errors break the replica for good (PMDK's sticky errors).
    Result<void> sticky(Result<void> result);
    // Counts a data-path call that succeeded, for the usage line logged at close.
    Result<void> counted(Result<void> result, std::uint64_t& calls, std::size_t bytes,
                         unsigned lane);
    // Ends a session that never got its pool (or its lanes).
    Result<void> abandon(Error why);
    void log_usage() const;

    // What one lane carried. A lane serves one thread at a time (the thread contract), so
    // plain counters suffice; one cache line each keeps lanes on different threads apart.
    struct alignas(64) LaneUsage {
        std::uint64_t persists = 0;
        std::uint64_t deep_persists = 0;
        std::uint64_t flushes = 0;
        std::uint64_t drains = 0;
        std::uint64_t reads = 0;
        std::uint64_t bytes = 0;
    };

    Settings settings_;
    Target target_;
    std::string where_; // "host:port" of the control channel, for messages
    std::string pool_set_;
    std::span<std::byte> pool_;
    bool has_header_ = false;
    bool created_ = false;
    bool closed_ = false;

    std::atomic<bool> broken_{false};
    mutable std::mutex broken_mutex_;
    std::optional<Error> broken_error_;
    std::atomic<bool> channel_failed_{false};

    std::unique_ptr<channel::Client> control_;
    std::unique_ptr<LaneSet> lanes_;
    std::vector<LaneUsage> usage_;
};

} // namespace rpmem::client
