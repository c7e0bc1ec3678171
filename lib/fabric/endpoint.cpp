// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/endpoint.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include <fmt/format.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "fabric/address.h"
#include "fabric/fabric_error.h"

namespace rpmem::fabric {

namespace {

constexpr std::size_t kCollectBatch = 16;

std::size_t capped(std::size_t wanted, std::size_t limit) {
    if (wanted == 0)
        return limit;
    return limit == 0 ? wanted : std::min(wanted, limit);
}

} // namespace

Result<Endpoint> Endpoint::create(const Domain& domain, const fi_info& info, EventQueue& events,
                                  EndpointOptions options) {
    return make(domain, info, events, nullptr, std::move(options));
}

Result<Endpoint> Endpoint::create_shared(const Domain& domain, const fi_info& info,
                                         EventQueue& events, CompletionQueue& completions,
                                         EndpointOptions options) {
    return make(domain, info, events, &completions, std::move(options));
}

Result<Endpoint> Endpoint::make(const Domain& domain, const fi_info& info, EventQueue& events,
                                CompletionQueue* shared, EndpointOptions options) {
    Endpoint endpoint;
    endpoint.p_.capabilities_ = Capabilities::from_info(info);
    endpoint.p_.peer_ = options.peer.empty() ? format_address(info.dest_addr, info.dest_addrlen)
                                             : std::move(options.peer);
    auto copy = duplicate_info(info);
    if (!copy)
        return fail(std::move(copy.error()));
    endpoint.p_.info_ = std::move(*copy);
    fi_info& own_info = *endpoint.p_.info_;
    const std::size_t tx_depth = capped(options.tx_depth, own_info.tx_attr->size);
    const std::size_t rx_depth = capped(options.rx_depth, own_info.rx_attr->size);
    own_info.tx_attr->size = tx_depth;
    own_info.rx_attr->size = rx_depth;

    if (shared == nullptr) {
        auto cq = CompletionQueue::open(domain, tx_depth + rx_depth);
        if (!cq)
            return fail(endpoint.with_peer(std::move(cq.error())));
        endpoint.p_.own_cq_ = std::move(*cq);
        endpoint.p_.cq_ = endpoint.p_.own_cq_.get();
    } else {
        endpoint.p_.cq_ = shared;
    }
    endpoint.p_.state_ = std::make_shared<ConnectionState>(endpoint.p_.cq_->get());
    endpoint.p_.events_ = &events;
    endpoint.p_.waiter_ = Waiter(domain.fabric(), options.wait);
    endpoint.p_.window_ = TxWindow(tx_depth);
    endpoint.p_.rx_depth_ = rx_depth;
    endpoint.p_.tx_timeout_ = options.tx_timeout;
    endpoint.p_.stash_.reserve(tx_depth + rx_depth);

    int ret = fi_endpoint(domain.get(), endpoint.p_.info_.get(), endpoint.p_.ep_.out(), nullptr);
    if (ret != 0)
        return fail(endpoint.with_peer(fabric_error(ret, "fi_endpoint")));
    ret = fi_ep_bind(endpoint.p_.ep_.get(), &events.get()->fid, 0);
    if (ret == 0)
        ret = fi_ep_bind(endpoint.p_.ep_.get(), &endpoint.p_.cq_->get()->fid,
                         FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
    if (ret != 0)
        return fail(endpoint.with_peer(fabric_error(ret, "fi_ep_bind")));
    ret = fi_enable(endpoint.p_.ep_.get());
    if (ret != 0)
        return fail(endpoint.with_peer(fabric_error(ret, "fi_enable")));

    std::size_t cm_data_size = 0;
    std::size_t option_length = sizeof cm_data_size;
    if (fi_getopt(&endpoint.p_.ep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &cm_data_size,
                  &option_length) == 0)
        endpoint.p_.max_private_data_ = cm_data_size;
    else
        endpoint.p_.max_private_data_ = endpoint.p_.capabilities_.max_private_data;

    events.watch(&endpoint.p_.ep_->fid, endpoint.p_.state_);
    return endpoint;
}

Endpoint::Endpoint(Endpoint&& other) noexcept
    : p_(std::exchange(other.p_, Parts{})) {}

Endpoint& Endpoint::operator=(Endpoint&& other) noexcept {
    if (this != &other) {
        close(); // the old endpoint goes before the queue it is bound to
        p_ = std::exchange(other.p_, Parts{});
    }
    return *this;
}

Endpoint::~Endpoint() {
    close();
}

void Endpoint::close() noexcept {
    if (p_.events_ != nullptr && p_.ep_)
        p_.events_->forget(&p_.ep_->fid);
    p_.ep_.reset();
}

Error Endpoint::with_peer(Error error) const {
    error.add_context(fmt::format("fabric connection with {}", p_.peer_));
    return error;
}

Result<void> Endpoint::connect(std::span<const std::byte> private_data) {
    if (p_.state_->phase() != ConnectionState::Phase::idle)
        return fail(with_peer(Error(EINVAL, "connect: endpoint already connecting or used")));
    if (private_data.size() > p_.max_private_data_)
        return fail(
            with_peer(Error(EMSGSIZE, fmt::format("connect: {} bytes of private data, "
                                                  "the provider carries {}",
                                                  private_data.size(), p_.max_private_data_))));
    p_.state_->mark_connecting();
    const int ret =
        fi_connect(p_.ep_.get(), p_.info_->dest_addr,
                   private_data.empty() ? nullptr : private_data.data(), private_data.size());
    if (ret != 0) {
        Error error = fabric_error(ret, "fi_connect");
        p_.state_->fail(error);
        return fail(with_peer(std::move(error)));
    }
    return {};
}

Result<void> Endpoint::accept(std::span<const std::byte> private_data) {
    if (p_.state_->phase() != ConnectionState::Phase::idle)
        return fail(with_peer(Error(EINVAL, "accept: endpoint already connecting or used")));
    if (private_data.size() > p_.max_private_data_)
        return fail(
            with_peer(Error(EMSGSIZE, fmt::format("accept: {} bytes of private data, "
                                                  "the provider carries {}",
                                                  private_data.size(), p_.max_private_data_))));
    p_.state_->mark_connecting();
    const int ret = fi_accept(p_.ep_.get(), private_data.empty() ? nullptr : private_data.data(),
                              private_data.size());
    if (ret != 0) {
        Error error = fabric_error(ret, "fi_accept");
        p_.state_->fail(error);
        return fail(with_peer(std::move(error)));
    }
    return {};
}

Result<void> Endpoint::wait_connected(Deadline deadline) {
    for (;;) {
        switch (p_.state_->phase()) {
        case ConnectionState::Phase::connected:
            return {};
        case ConnectionState::Phase::failed:
            return fail(with_peer(p_.state_->failure()));
        case ConnectionState::Phase::idle:
            return fail(with_peer(Error(EINVAL, "wait_connected before connect or accept")));
        case ConnectionState::Phase::connecting:
            break;
        }
        const int block_ms = milliseconds_until(deadline, p_.waiter_.policy().slice);
        if (block_ms == 0)
            return fail(with_peer(Error(ETIMEDOUT,
                                        "connection not established before the "
                                        "deadline",
                                        ErrorSource::fabric, FI_ETIMEDOUT)));
        auto pumped = p_.events_->pump(std::chrono::milliseconds(block_ms));
        if (!pumped)
            return fail(with_peer(std::move(pumped.error())));
    }
}

Result<void> Endpoint::shutdown() {
    const int ret = fi_shutdown(p_.ep_.get(), 0);
    p_.state_->fail(
        Error(ECONNRESET, "connection shut down locally", ErrorSource::fabric, FI_ECONNRESET));
    if (ret != 0)
        return fail(with_peer(connection_error(ret, "fi_shutdown", {})));
    return {};
}

Result<void> Endpoint::usable(const char* operation) {
    ConnectionState::Phase phase = p_.state_->phase();
    if (phase == ConnectionState::Phase::connected)
        return {};
    if (phase == ConnectionState::Phase::connecting) {
        // The peer may already use a connection whose FI_CONNECTED nobody has read yet (a
        // target answering the first message of a lane): read the event queue once.
        if (auto pumped = p_.events_->pump(); !pumped)
            return fail(with_peer(std::move(pumped.error())));
        phase = p_.state_->phase();
        if (phase == ConnectionState::Phase::connected)
            return {};
    }
    if (phase == ConnectionState::Phase::failed)
        return fail(with_peer(p_.state_->failure().add_context(operation)));
    return fail(with_peer(Error(ENOTCONN, fmt::format("{}: not connected", operation))));
}

template <typename Post>
Result<void> Endpoint::post_transmit(const char* operation, bool wants_completion, void* context,
                                     std::uint64_t extra_flags, Post&& post) {
    if (auto ok = usable(operation); !ok)
        return ok;
    bool signalled = true;
    if (p_.own_cq_) {
        TxWindow::Decision decision = p_.window_.plan(wants_completion);
        if (decision == TxWindow::Decision::full) {
            if (auto room = wait_for_room(deadline_after(p_.tx_timeout_)); !room)
                return room;
            decision = p_.window_.plan(wants_completion);
        }
        signalled = decision == TxWindow::Decision::signalled;
    } else if (!wants_completion) {
        return fail(with_peer(Error(EINVAL, fmt::format("{}: an endpoint on a shared "
                                                        "completion queue posts every "
                                                        "operation signalled",
                                                        operation))));
    }
    void* const posted_context = signalled && !wants_completion ? flush_context() : context;
    const std::uint64_t flags = extra_flags | (signalled ? FI_COMPLETION : 0);
    const Deadline deadline = deadline_after(p_.tx_timeout_);
    for (;;) {
        const ssize_t ret = post(flags, posted_context);
        if (ret == 0)
            break;
        if (ret != -FI_EAGAIN)
            return fail(with_peer(post_failure(static_cast<int>(ret), operation)));
        // The provider's queue is short of something our window does not see: let it make
        // progress (reading our queue does), or hand EAGAIN to the owner of a shared queue.
        if (!p_.own_cq_)
            return fail(with_peer(connection_error(static_cast<int>(ret), operation, {})));
        if (auto collected = collect(false, deadline); !collected)
            return collected;
        if (Clock::now() >= deadline)
            return fail(with_peer(Error(ETIMEDOUT,
                                        fmt::format("{}: transmit queue stayed "
                                                    "full",
                                                    operation),
                                        ErrorSource::fabric, FI_EAGAIN)));
    }
    if (p_.own_cq_)
        p_.window_.on_posted(signalled);
    return {};
}

Error Endpoint::post_failure(int code, const char* operation) {
    // The provider may have refused because the connection broke: its event says why.
    (void)p_.events_->pump();
    if (p_.state_->failed())
        return p_.state_->failure().add_context(operation);
    Error error = connection_error(code, operation, {});
    if (error.errno_value() == ECONNRESET)
        p_.state_->fail(error);
    return error;
}

Result<void> Endpoint::write(const MemoryRegion& source, std::size_t source_offset,
                             std::size_t length, const RemoteRegion& target,
                             std::uint64_t target_offset, Signal signal, void* context) {
    return post_write("RMA write", source, source_offset, length, target, target_offset,
                      signal == Signal::yes, 0, context);
}

Result<void> Endpoint::write_commit(const MemoryRegion& source, std::size_t source_offset,
                                    std::size_t length, const RemoteRegion& target,
                                    std::uint64_t target_offset, void* context) {
    if (!p_.capabilities_.commit_complete)
        return fail(with_peer(Error(EOPNOTSUPP, fmt::format("provider {} does not honour "
                                                            "FI_COMMIT_COMPLETE",
                                                            p_.capabilities_.provider))));
    return post_write("committed RMA write", source, source_offset, length, target, target_offset,
                      true, FI_COMMIT_COMPLETE, context);
}

Result<void> Endpoint::post_write(const char* operation, const MemoryRegion& source,
                                  std::size_t source_offset, std::size_t length,
                                  const RemoteRegion& target, std::uint64_t target_offset,
                                  bool wants_completion, std::uint64_t extra_flags, void* context) {
    if (!source.contains(source_offset, length) || !target.contains(target_offset, length))
        return fail(
            with_peer(Error(EINVAL, fmt::format("{} of {} bytes from offset {} to "
                                                "offset {}: outside the regions",
                                                operation, length, source_offset, target_offset))));
    if (length > p_.capabilities_.max_msg_size)
        return fail(with_peer(
            Error(EMSGSIZE, fmt::format("{} of {} bytes: the provider moves "
                                        "at most {}",
                                        operation, length, p_.capabilities_.max_msg_size))));
    return post_transmit(
        operation, wants_completion, context, extra_flags, [&](std::uint64_t flags, void* ctx) {
            iovec iov{source.data() + source_offset, length};
            void* descriptor = source.descriptor();
            fi_rma_iov rma{target.remote_address(target_offset), length, target.key};
            fi_msg_rma message{};
            message.msg_iov = &iov;
            message.desc = &descriptor;
            message.iov_count = 1;
            message.rma_iov = &rma;
            message.rma_iov_count = 1;
            message.context = ctx;
            return fi_writemsg(p_.ep_.get(), &message, flags);
        });
}

Result<void> Endpoint::read(const MemoryRegion& target, std::size_t target_offset,
                            std::size_t length, const RemoteRegion& source,
                            std::uint64_t source_offset, void* context) {
    if (!target.contains(target_offset, length) || !source.contains(source_offset, length))
        return fail(with_peer(Error(EINVAL, fmt::format("RMA read of {} bytes from offset {} "
                                                        "to offset {}: outside the regions",
                                                        length, source_offset, target_offset))));
    return post_transmit("RMA read", true, context, 0, [&](std::uint64_t flags, void* ctx) {
        iovec iov{target.data() + target_offset, length};
        void* descriptor = target.descriptor();
        fi_rma_iov rma{source.remote_address(source_offset), length, source.key};
        fi_msg_rma message{};
        message.msg_iov = &iov;
        message.desc = &descriptor;
        message.iov_count = 1;
        message.rma_iov = &rma;
        message.rma_iov_count = 1;
        message.context = ctx;
        return fi_readmsg(p_.ep_.get(), &message, flags);
    });
}

Result<void> Endpoint::send(const MemoryRegion& source, std::size_t offset, std::size_t length,
                            Signal signal, void* context) {
    if (!source.contains(offset, length))
        return fail(with_peer(Error(EINVAL, fmt::format("send of {} bytes from offset {}: "
                                                        "outside the region",
                                                        length, offset))));
    return post_transmit("send", signal == Signal::yes, context, 0,
                         [&](std::uint64_t flags, void* ctx) {
                             iovec iov{source.data() + offset, length};
                             void* descriptor = source.descriptor();
                             fi_msg message{};
                             message.msg_iov = &iov;
                             message.desc = &descriptor;
                             message.iov_count = 1;
                             message.context = ctx;
                             return fi_sendmsg(p_.ep_.get(), &message, flags);
                         });
}

Result<void> Endpoint::post_receive(const MemoryRegion& target, std::size_t offset,
                                    std::size_t length, void* context) {
    if (!target.contains(offset, length))
        return fail(with_peer(Error(EINVAL, fmt::format("receive of {} bytes at offset {}: "
                                                        "outside the region",
                                                        length, offset))));
    if (p_.state_->failed())
        return fail(with_peer(p_.state_->failure().add_context("receive")));
    iovec iov{target.data() + offset, length};
    void* descriptor = target.descriptor();
    fi_msg message{};
    message.msg_iov = &iov;
    message.desc = &descriptor;
    message.iov_count = 1;
    message.context = context;
    const ssize_t ret = fi_recvmsg(p_.ep_.get(), &message, FI_COMPLETION);
    if (ret != 0)
        return fail(with_peer(post_failure(static_cast<int>(ret), "receive")));
    return {};
}

Result<std::size_t> Endpoint::collect_into(std::span<Completion> out, bool block,
                                           Deadline deadline) {
    CompletionResult read =
        block ? p_.waiter_.wait(*p_.cq_, out, p_.events_, p_.state_.get(), deadline)
              : p_.cq_->read(out);
    if (!read) {
        CompletionError& failure = read.error();
        // A failed operation leaves the connection in an unknown state: fail it, so that every
        // later call reports the same cause. Timeouts and the state's own failure are not new.
        if (failure.context != nullptr || failure.flags != 0)
            p_.state_->fail(failure.error);
        return fail(with_peer(std::move(failure.error)));
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < *read; ++i) {
        const Completion& completion = out[i];
        if (completion.is_transmit())
            p_.window_.on_completed();
        if (completion.context != flush_context())
            out[kept++] = completion;
    }
    return kept;
}

Result<void> Endpoint::collect(bool block, Deadline deadline) {
    std::array<Completion, kCollectBatch> batch;
    auto kept = collect_into(batch, block, deadline);
    if (!kept)
        return fail(std::move(kept.error()));
    p_.stash_.insert(p_.stash_.end(), batch.begin(),
                     batch.begin() + static_cast<std::ptrdiff_t>(*kept));
    return {};
}

Result<void> Endpoint::wait_for_room(Deadline deadline) {
    while (p_.window_.plan(false) == TxWindow::Decision::full) {
        if (auto collected = collect(true, deadline); !collected)
            return collected;
    }
    return {};
}

Result<std::size_t> Endpoint::poll(std::span<Completion> out) {
    if (!p_.own_cq_)
        return fail(with_peer(Error(EINVAL, "poll: the endpoint shares its completion queue")));
    if (p_.stash_.empty())
        return out.empty() ? Result<std::size_t>(0) : collect_into(out, false, Deadline());
    const std::size_t count = std::min(out.size(), p_.stash_.size());
    std::copy_n(p_.stash_.begin(), count, out.begin());
    p_.stash_.erase(p_.stash_.begin(), p_.stash_.begin() + static_cast<std::ptrdiff_t>(count));
    return count;
}

Result<std::size_t> Endpoint::wait(std::span<Completion> out, Deadline deadline) {
    if (!p_.own_cq_)
        return fail(with_peer(Error(EINVAL, "wait: the endpoint shares its completion queue")));
    if (out.empty())
        return fail(with_peer(Error(EINVAL, "wait: no room for a completion")));
    // Straight from the queue into the caller's array, unless wait_for() kept some earlier.
    while (p_.stash_.empty()) {
        auto kept = collect_into(out, true, deadline);
        if (!kept || *kept > 0)
            return kept;
    }
    return poll(out);
}

Result<Completion> Endpoint::wait_for(void* context, Deadline deadline) {
    if (!p_.own_cq_)
        return fail(with_peer(Error(EINVAL, "wait_for: the endpoint shares its completion queue")));
    for (;;) {
        const auto found = std::find_if(p_.stash_.begin(), p_.stash_.end(),
                                        [&](const Completion& c) { return c.context == context; });
        if (found != p_.stash_.end()) {
            const Completion completion = *found;
            p_.stash_.erase(found);
            return completion;
        }
        if (auto collected = collect(true, deadline); !collected)
            return fail(std::move(collected.error()));
    }
}

} // namespace rpmem::fabric
