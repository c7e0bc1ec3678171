// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "base/target.h"
#include "client/control.h"
#include "client/settings.h"

namespace rpmem::client {

// How rpmem_persist() may reach durability.
enum class PersistMode {
    strict,  // every aligned 8-byte word lands whole (libpmemobj relies on it)
    relaxed, // RPMEM_PERSIST_RELAXED: plain writes allowed
};

// One remote replica of a local pool: the TLS control channel to rpmemd, the session it opened,
// and the lanes (fabric endpoints) persists travel on. Made by create() or open(); close() ends
// the session (the destructor closes too, logging instead of reporting).
//
// Thread contract: lanes are the caller's, as in PMDK. Operations on different lanes may run
// concurrently; one lane must not be used by two threads at once. create/open/close/set_attr
// must not race with each other or with data-path calls. After a data-path failure the replica
// is broken and every later data-path call fails with the same errno (sticky errors).
class Replica {
public:
    virtual ~Replica() = default;

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

    virtual unsigned lane_count() const noexcept = 0;

    virtual Result<void> persist(std::size_t offset, std::size_t length, unsigned lane,
                                 PersistMode mode) = 0;
    // As persist(), and the target flushes to its deepest domain (msync off pmem).
    virtual Result<void> deep_persist(std::size_t offset, std::size_t length, unsigned lane) = 0;
    // Starts a persist; durable after the next drain() on the same lane.
    virtual Result<void> flush(std::size_t offset, std::size_t length, unsigned lane,
                               PersistMode mode) = 0;
    virtual Result<void> drain(unsigned lane) = 0;
    virtual Result<void> read(std::span<std::byte> into, std::size_t offset, unsigned lane) = 0;

    virtual Result<void> set_attributes(const PoolAttributes& attributes) = 0;

    // Ends the session; afterwards only destruction is allowed. Reports the first error met but
    // always tears everything down.
    virtual Result<void> close() = 0;
};

} // namespace rpmem::client
