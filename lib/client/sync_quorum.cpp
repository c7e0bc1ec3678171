// SPDX-License-Identifier: BSD-3-Clause
#include "client/sync_quorum.h"

#include <algorithm>

#include <fmt/format.h>

namespace rpmem::client {

unsigned SyncQuorum::required() const noexcept {
    return min_in_sync_ == 0 ? members_ : std::min(min_in_sync_, members_);
}

SyncQuorum::Member::Member(std::shared_ptr<SyncQuorum> quorum)
    : quorum_(std::move(quorum)) {
    const std::lock_guard lock(quorum_->mutex_);
    ++quorum_->members_;
}

SyncQuorum::Member::~Member() {
    const std::lock_guard lock(quorum_->mutex_);
    --quorum_->members_;
    if (out_)
        --quorum_->out_of_sync_;
}

bool SyncQuorum::Member::leave_sync(bool regardless) {
    const std::lock_guard lock(quorum_->mutex_);
    if (out_)
        return true;
    const unsigned staying = quorum_->members_ - quorum_->out_of_sync_ - 1;
    if (!regardless && staying < quorum_->required())
        return false;
    out_ = true;
    ++quorum_->out_of_sync_;
    return true;
}

void SyncQuorum::Member::rejoin_sync() {
    const std::lock_guard lock(quorum_->mutex_);
    if (!out_)
        return;
    out_ = false;
    --quorum_->out_of_sync_;
}

std::string SyncQuorum::Member::describe() const {
    const std::lock_guard lock(quorum_->mutex_);
    return fmt::format("{} of {} replicas in sync, at least {} required",
                       quorum_->members_ - quorum_->out_of_sync_, quorum_->members_,
                       quorum_->required());
}

} // namespace rpmem::client
