// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/pool_registry.h"

#include <utility>

#include <fmt/format.h>

#include "rpmemd/status_error.h"

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

Result<PoolRegistry::Hold> PoolRegistry::acquire(Key key, Entry entry) {
    std::lock_guard lock(mutex_);
    auto [found, inserted] = entries_.try_emplace(key, std::move(entry));
    if (!inserted)
        return fail(status_error(protocol::Status::busy,
                                 fmt::format("pool set '{}' is in use by session {}",
                                             found->second.name, found->second.session)));
    return Hold(this, key);
}

std::vector<PoolRegistry::Entry> PoolRegistry::entries() const {
    std::lock_guard lock(mutex_);
    std::vector<Entry> list;
    list.reserve(entries_.size());
    for (const auto& [key, entry] : entries_)
        list.push_back(entry);
    return list;
}

std::size_t PoolRegistry::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

void PoolRegistry::release(const Key& key) noexcept {
    std::lock_guard lock(mutex_);
    entries_.erase(key);
}

} // namespace rpmem::daemon
