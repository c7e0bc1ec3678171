// SPDX-License-Identifier: BSD-3-Clause
#include "capi/sibling_registry.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace rpmem::capi {

std::shared_ptr<client::SiblingGroup> siblings_of(const void* pool_addr, std::size_t pool_size,
                                                  unsigned min_in_sync, bool fan_out) {
    using Range = std::pair<std::uintptr_t, std::size_t>;
    static std::mutex mutex;
    static std::map<Range, std::weak_ptr<client::SiblingGroup>> quorums;

    const std::lock_guard lock(mutex);
    for (auto it = quorums.begin(); it != quorums.end();)
        it = it->second.expired() ? quorums.erase(it) : std::next(it);
    auto& slot = quorums[Range{reinterpret_cast<std::uintptr_t>(pool_addr), pool_size}];
    if (auto shared = slot.lock())
        return shared;
    auto made = std::make_shared<client::SiblingGroup>(min_in_sync, fan_out);
    slot = made;
    return made;
}

} // namespace rpmem::capi
