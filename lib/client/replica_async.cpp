// SPDX-License-Identifier: BSD-3-Clause
// Asynchronous replication in client::Replica: starting and stopping its OrderedStream, the
// calls that queue on it, and the lane it borrows (StreamLane). The stream's ordering rules are
// in ordered_stream.h; the synchronous data path is in replica.cpp.
#include <cerrno>
#include <mutex>

#include <fmt/format.h>

#include "channel/client.h"
#include "client/lane_set.h"
#include "client/logger.h"
#include "client/replica.h"
#include "persist/initiator_lane.h"
#include "protocol/version.h"

namespace rpmem::client {

unsigned Replica::lanes_with_stream(unsigned lanes) const noexcept {
    // The stream's own lane, so that it never waits for an application's lane nor holds one.
    return settings_.replication == Replication::async && lanes > 0 ? lanes + 1 : lanes;
}

void Replica::start_stream() {
    lane_count_ = connected_lanes_;
    if (settings_.replication != Replication::async)
        return;
    if (!protocol::has_capability(connection_->control->hello().capabilities,
                                  protocol::Capability::ordered_records)) {
        logger().warn("{}: the target cannot apply ordered records (an older rpmemd): "
                      "replicating synchronously",
                      describe());
        return;
    }
    if (connected_lanes_ < 2) {
        logger().warn("{}: the target granted one lane, none left for the replication stream: "
                      "replicating synchronously",
                      describe());
        return;
    }
    lane_count_ = connected_lanes_ - 1;
    const std::size_t message_size = connection_->lanes->lane(lane_count_).inline_size();
    stream_ = std::make_unique<OrderedStream>(
        pool_, message_size, recovery_, static_cast<StreamLane&>(*this),
        OrderedStream::Bounds{.max_lag = settings_.max_lag,
                              .max_lag_time = settings_.max_lag_time,
                              .timeout = settings_.timeout},
        settings_.on_replica_failure == FailurePolicy::continue_degraded);
    logger().info("{}: asynchronous replication, at most {} bytes and {} ms behind", describe(),
                  settings_.max_lag, settings_.max_lag_time.count());
}

std::optional<Result<void>> Replica::queue_async(std::size_t offset, std::size_t length,
                                                 OrderedStream::Call call) {
    if (!stream_)
        return std::nullopt;
    auto queued = stream_->queue(offset, length, call);
    if (!queued)
        return sticky(fail(std::move(queued.error())));
    if (!*queued)
        return std::nullopt;
    return Result<void>{};
}

Result<void> Replica::wait_replicated(std::chrono::milliseconds timeout) {
    if (!stream_)
        return check_broken();
    return stream_->wait_replicated(timeout);
}

ReplicationLag Replica::replication_lag() const {
    return stream_ ? stream_->lag() : ReplicationLag{};
}

Result<void> Replica::stop_stream() {
    if (!stream_)
        return {};
    Result<void> caught_up = stream_->wait_replicated(settings_.timeout);
    const ReplicationLag lag = stream_->lag();
    if (const std::uint64_t lost = stream_->stop(); lost != 0) {
        behind_ = true; // close leaves it outdated: it misses what was never acknowledged
        logger().warn("{}: closing with {} bytes never acknowledged: the replica is left "
                      "outdated",
                      describe(), lost);
    }
    logger().info("{}: asynchronous replication: {} records in {} messages; lag at most {} "
                  "bytes and {} us",
                  describe(), lag.records, lag.messages, lag.max_bytes, lag.max_age.count());
    if (!caught_up)
        return fail(std::move(caught_up.error())
                        .add_context(fmt::format("{}: closing pool set {}", where_, pool_set_)));
    return {};
}

namespace {

// The stream's view of an initiator lane.
class InitiatorRecordLane final : public RecordLane {
public:
    explicit InitiatorRecordLane(persist::InitiatorLane& lane) noexcept
        : lane_(lane) {}
    Result<std::uint32_t> send_records(std::span<const std::byte> records,
                                       std::uint64_t behind) override {
        return lane_.send_records(records, behind);
    }
    Result<void> wait_acknowledged(std::uint32_t sequence) override {
        return lane_.wait_acknowledged(sequence);
    }
    bool acknowledged(std::uint32_t sequence) const noexcept override {
        return lane_.acknowledged(sequence);
    }

private:
    persist::InitiatorLane& lane_;
};

} // namespace

bool Replica::with_stream_lane(const std::function<void(RecordLane&)>& round) {
    LaneGuard& guard = guards_[lane_count_];
    const std::lock_guard lock(guard.mutex);
    if (recovery_.state() != SyncState::in_sync || !connection_)
        return false;
    InitiatorRecordLane lane(connection_->lanes->lane(lane_count_));
    round(lane);
    return true;
}

void Replica::stream_broken(const Error& why) {
    (void)sticky(fail(Error(why)));
}

} // namespace rpmem::client
