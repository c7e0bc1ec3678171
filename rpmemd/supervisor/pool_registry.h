// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <compare>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/error.h"

namespace rpmem::daemon {

// The pool sets this daemon has in use, keyed by the identity (device, inode) of their set
// files. The part files' flock already keeps two sessions off one pool, also within one process
// (flock locks belong to open file descriptions); the registry adds what flock cannot: a pool
// is reserved before its files are touched (so a remove cannot slip between a create's steps),
// the reservation outlives the files' removal on close, the daemon can list its pools, and a
// promote can take a pool over from the session that has it (take_over).
// Owned by the PoolStore; thread-safe (one mutex); must outlive every Hold.
class PoolRegistry {
public:
    struct Key {
        dev_t device = 0;
        ino_t inode = 0;
        friend auto operator<=>(const Key&, const Key&) = default;
    };

    // What `rpmemctl status` shows of a pool in use.
    struct Entry {
        std::string directory; // the pool set directory it was found in
        std::string name;      // relative to that directory
        std::uint64_t session = 0;
    };

    // How a holder is asked to let its pool go (its session ends its channel, and releases the
    // pool once its data plane stopped); empty: it cannot be asked.
    using Evict = std::function<void()>;

    // A reservation of one pool set; releases it when destroyed. Move-only.
    class Hold {
    public:
        Hold() = default;
        Hold(Hold&& other) noexcept;
        Hold& operator=(Hold&& other) noexcept;
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;
        ~Hold();

        void release() noexcept;

    private:
        friend class PoolRegistry;
        Hold(PoolRegistry* registry, Key key)
            : registry_(registry)
            , key_(key) {}
        PoolRegistry* registry_ = nullptr;
        Key key_;
    };

    PoolRegistry() = default;
    PoolRegistry(const PoolRegistry&) = delete;
    PoolRegistry& operator=(const PoolRegistry&) = delete;

    // Reserves `key` for `entry.session`; EBUSY (answered with Status::busy) naming the session
    // that holds it when it is taken.
    Result<Hold> acquire(Key key, Entry entry, Evict evict = {});

    // Reserves `key` for `entry` even when a session holds it: asks the holder to let go and
    // waits until its Hold is released (its data plane stopped and its mapping gone first), at
    // most `timeout` (ETIMEDOUT, answered with Status::busy). `evicted` tells whether there was a
    // holder. The holder's evict runs without the registry's lock held.
    Result<Hold> take_over(Key key, Entry entry, std::chrono::milliseconds timeout, bool& evicted);

    // The pools in use, in no particular order.
    std::vector<Entry> entries() const;
    std::size_t size() const;

private:
    void release(const Key& key) noexcept;

    struct Slot {
        Entry entry;
        Evict evict;
    };

    mutable std::mutex mutex_;
    std::condition_variable released_; // notified whenever a Hold is released
    std::map<Key, Slot> entries_;      // guarded by mutex_
};

} // namespace rpmem::daemon
