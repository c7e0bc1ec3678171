// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/own_queue_endpoint.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include "fabric/fabric_error.h"

namespace rpmem::fabric {

namespace {

constexpr std::size_t kCollectBatch = 16;

} // namespace

Result<OwnQueueEndpoint> OwnQueueEndpoint::create(const Domain& domain, const fi_info& info,
                                                  EventQueue& events, EndpointOptions options) {
    const QueueDepths depths = queue_depths(info, options);
    auto queue = CompletionQueue::open(domain, depths.tx + depths.rx);
    if (!queue)
        return fail(with_peer(std::move(queue.error()), info, options));
    auto endpoint = Endpoint::open(domain, info, events, **queue, options);
    if (!endpoint)
        return fail(std::move(endpoint.error()));
    return OwnQueueEndpoint(std::move(*endpoint), std::move(*queue), domain, options);
}

OwnQueueEndpoint::OwnQueueEndpoint(Endpoint endpoint, std::unique_ptr<CompletionQueue> queue,
                                   const Domain& domain, const EndpointOptions& options)
    : Endpoint(std::move(endpoint))
    , queue_(std::move(queue))
    , waiter_(domain.fabric(), options.wait)
    , window_(tx_depth())
    , tx_timeout_(options.tx_timeout) {
    stash_.reserve(tx_depth() + rx_depth());
}

Result<void> OwnQueueEndpoint::write(const MemoryRegion& source, std::size_t source_offset,
                                     std::size_t length, const RemoteRegion& target,
                                     std::uint64_t target_offset, Signal signal, void* context) {
    auto op = rma_write(source, source_offset, length, target, target_offset, signal == Signal::yes,
                        context);
    return op ? transmit(*op) : fail(std::move(op.error()));
}

Result<void> OwnQueueEndpoint::write_commit(const MemoryRegion& source, std::size_t source_offset,
                                            std::size_t length, const RemoteRegion& target,
                                            std::uint64_t target_offset, void* context) {
    auto op = committed_write(source, source_offset, length, target, target_offset, context);
    return op ? transmit(*op) : fail(std::move(op.error()));
}

Result<void> OwnQueueEndpoint::read(const MemoryRegion& target, std::size_t target_offset,
                                    std::size_t length, const RemoteRegion& source,
                                    std::uint64_t source_offset, void* context) {
    auto op = rma_read(target, target_offset, length, source, source_offset, context);
    return op ? transmit(*op) : fail(std::move(op.error()));
}

Result<void> OwnQueueEndpoint::send(const MemoryRegion& source, std::size_t offset,
                                    std::size_t length, Signal signal, void* context) {
    auto op = message(source, offset, length, signal == Signal::yes, context);
    return op ? transmit(*op) : fail(std::move(op.error()));
}

Result<void> OwnQueueEndpoint::transmit(const Transmit& op) {
    if (auto ok = usable(op.operation); !ok)
        return ok;
    TxWindow::Decision decision = window_.plan(op.wants_completion);
    if (decision == TxWindow::Decision::full) {
        if (auto room = wait_for_room(deadline_after(tx_timeout_)); !room)
            return room;
        decision = window_.plan(op.wants_completion);
    }
    const bool signalled = decision == TxWindow::Decision::signalled;
    void* const posted_context = signalled && !op.wants_completion ? forced_context() : op.context;
    const std::uint64_t flags = signalled ? FI_COMPLETION : 0;
    // The clock is read only once the provider is short of room.
    std::optional<Deadline> deadline;
    for (;;) {
        const ssize_t ret = post(op, flags, posted_context);
        if (ret == 0)
            break;
        if (ret != -FI_EAGAIN)
            return fail(with_peer(post_failure(static_cast<int>(ret), op.operation)));
        // The provider's queue is short of something our window does not see: let it make
        // progress (reading our queue does).
        if (!deadline)
            deadline = deadline_after(tx_timeout_);
        if (auto collected = collect(false, *deadline); !collected)
            return collected;
        if (Clock::now() >= *deadline)
            return fail(with_peer(Error(ETIMEDOUT,
                                        fmt::format("{}: transmit queue stayed "
                                                    "full",
                                                    op.operation),
                                        ErrorSource::fabric, FI_EAGAIN)));
    }
    window_.on_posted(signalled);
    return {};
}

Result<std::size_t> OwnQueueEndpoint::collect_into(std::span<Completion> out, bool block,
                                                   Deadline deadline) {
    CompletionResult read =
        block ? waiter_.wait(*queue_, out, &events(), &state(), deadline) : queue_->read(out);
    if (!read) {
        CompletionError& failure = read.error();
        // A failed operation leaves the connection in an unknown state: fail it, so that every
        // later call reports the same cause. Timeouts and the state's own failure are not new.
        if (failure.context != nullptr || failure.flags != 0)
            mutable_state().fail(failure.error);
        return fail(with_peer(std::move(failure.error)));
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < *read; ++i) {
        const Completion& completion = out[i];
        if (completion.is_transmit())
            window_.on_completed();
        if (completion.context != forced_context())
            out[kept++] = completion;
    }
    return kept;
}

Result<void> OwnQueueEndpoint::collect(bool block, Deadline deadline) {
    std::array<Completion, kCollectBatch> batch;
    auto kept = collect_into(batch, block, deadline);
    if (!kept)
        return fail(std::move(kept.error()));
    stash_.insert(stash_.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*kept));
    return {};
}

Result<void> OwnQueueEndpoint::wait_for_room(Deadline deadline) {
    while (window_.plan(false) == TxWindow::Decision::full) {
        if (auto collected = collect(true, deadline); !collected)
            return collected;
    }
    return {};
}

Result<std::size_t> OwnQueueEndpoint::poll(std::span<Completion> out) {
    if (stash_.empty())
        return out.empty() ? Result<std::size_t>(0) : collect_into(out, false, Deadline());
    const std::size_t count = std::min(out.size(), stash_.size());
    std::copy_n(stash_.begin(), count, out.begin());
    stash_.erase(stash_.begin(), stash_.begin() + static_cast<std::ptrdiff_t>(count));
    return count;
}

Result<std::size_t> OwnQueueEndpoint::wait(std::span<Completion> out, Deadline deadline) {
    if (out.empty())
        return fail(with_peer(Error(EINVAL, "wait: no room for a completion")));
    // Straight from the queue into the caller's array, unless wait_for() kept some earlier.
    while (stash_.empty()) {
        auto kept = collect_into(out, true, deadline);
        if (!kept || *kept > 0)
            return kept;
    }
    return poll(out);
}

Result<Completion> OwnQueueEndpoint::wait_for(void* context, Deadline deadline) {
    for (;;) {
        const auto found = std::find_if(stash_.begin(), stash_.end(),
                                        [&](const Completion& c) { return c.context == context; });
        if (found != stash_.end()) {
            const Completion completion = *found;
            stash_.erase(found);
            return completion;
        }
        if (auto collected = collect(true, deadline); !collected)
            return fail(std::move(collected.error()));
    }
}

} // namespace rpmem::fabric
