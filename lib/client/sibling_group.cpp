// SPDX-License-Identifier: BSD-3-Clause
#include "client/sibling_group.h"

#include <algorithm>
#include <mutex>

namespace rpmem::client {

SiblingGroup::SiblingGroup(unsigned min_in_sync, bool fan_out)
    : quorum_(std::make_shared<SyncQuorum>(min_in_sync))
    , fan_out_(fan_out) {}

SiblingGroup::Membership::Membership(std::shared_ptr<SiblingGroup> group, FanOutMember& member)
    : group_(std::move(group))
    , member_(member) {
    const std::unique_lock lock(group_->mutex_);
    group_->members_.push_back(&member_);
    group_->size_.store(group_->members_.size(), std::memory_order_release);
}

SiblingGroup::Membership::~Membership() {
    // Waits for posts under way to this member: none may reach it once this returns.
    const std::unique_lock lock(group_->mutex_);
    std::erase(group_->members_, &member_);
    group_->size_.store(group_->members_.size(), std::memory_order_release);
}

unsigned SiblingGroup::Membership::post_to_siblings(std::size_t offset, std::size_t length,
                                                    unsigned lane) const {
    // Alone (or fan-out off): nobody to post to. A sibling that joins meanwhile misses this
    // post and persists the range on its own call, as when it is busy.
    if (!group_->fan_out_ || group_->size_.load(std::memory_order_acquire) < 2)
        return 0;
    const std::shared_lock lock(group_->mutex_);
    unsigned posted = 0;
    for (FanOutMember* sibling : group_->members_)
        if (sibling != &member_ && sibling->post_ahead(offset, length, lane))
            ++posted;
    return posted;
}

} // namespace rpmem::client
