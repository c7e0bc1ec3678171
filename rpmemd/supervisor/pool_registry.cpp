// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/pool_registry.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "rpmemd/supervisor/status_error.h"

namespace rpmem::daemon {

PoolRegistry::Hold::Hold(Hold&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr))
    , key_(other.key_) {}

PoolRegistry::Hold& PoolRegistry::Hold::operator=(Hold&& other) noexcept {
    if (this != &other) {
        release();
        registry_ = std::exchange(other.registry_, nullptr);
        key_ = other.key_;
    }
    return *this;
}

PoolRegistry::Hold::~Hold() {
    release();
}

void PoolRegistry::Hold::release() noexcept {
    if (registry_ != nullptr)
        std::exchange(registry_, nullptr)->release(key_);
}

Result<PoolRegistry::Hold> PoolRegistry::acquire(Key key, Entry entry, Evict evict) {
    std::lock_guard lock(mutex_);
    auto [found, inserted] = entries_.try_emplace(key, Slot{std::move(entry), std::move(evict)});
    if (!inserted)
        return fail(
            status_error(protocol::Status::busy,
                         fmt::format("pool set '{}' is in use by session {}",
                                     found->second.entry.name, found->second.entry.session)));
    return Hold(this, key);
}

Result<PoolRegistry::Hold>
PoolRegistry::take_over(Key key, Entry entry, std::chrono::milliseconds timeout, bool& evicted) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    evicted = false;
    std::optional<std::uint64_t> asked; // the holder last asked to let go
    std::unique_lock lock(mutex_);
    while (true) {
        auto found = entries_.find(key);
        if (found == entries_.end())
            break;
        const std::uint64_t holder = found->second.entry.session;
        // A new holder (a session that opened the pool between two looks) is asked too.
        if (asked != holder) {
            if (!found->second.evict)
                return fail(status_error(protocol::Status::busy,
                                         fmt::format("pool set '{}' is in use by session {}, "
                                                     "which cannot be ended",
                                                     found->second.entry.name, holder)));
            Evict evict = found->second.evict;
            evicted = true;
            asked = holder;
            // The holder's session may take this lock while it releases: never call it locked.
            lock.unlock();
            evict();
            lock.lock();
            continue;
        }
        if (released_.wait_until(lock, deadline) == std::cv_status::timeout &&
            entries_.count(key) != 0)
            return fail(status_error(protocol::Status::busy,
                                     fmt::format("pool set '{}': session {} did not let it go "
                                                 "within {} ms",
                                                 entry.name, holder, timeout.count())));
    }
    entries_.emplace(key, Slot{std::move(entry), {}});
    return Hold(this, key);
}

std::vector<PoolRegistry::Entry> PoolRegistry::entries() const {
    std::lock_guard lock(mutex_);
    std::vector<Entry> list;
    list.reserve(entries_.size());
    for (const auto& [key, slot] : entries_)
        list.push_back(slot.entry);
    return list;
}

std::size_t PoolRegistry::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

void PoolRegistry::release(const Key& key) noexcept {
    {
        std::lock_guard lock(mutex_);
        entries_.erase(key);
    }
    released_.notify_all();
}

} // namespace rpmem::daemon
