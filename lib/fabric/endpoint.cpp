// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/endpoint.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <fmt/format.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include "fabric/address.h"
#include "fabric/fabric_error.h"
#include "fabric/fid_ptr.h"

namespace rpmem::fabric {

namespace {

std::size_t capped(std::size_t wanted, std::size_t limit) {
    if (wanted == 0)
        return limit;
    return limit == 0 ? wanted : std::min(wanted, limit);
}

std::string peer_name(const fi_info& info, const EndpointOptions& options) {
    return options.peer.empty() ? format_address(info.dest_addr, info.dest_addrlen) : options.peer;
}

} // namespace

void EndpointCloser::operator()(fid_ep* endpoint) const noexcept {
    if (events != nullptr)
        events->forget(&endpoint->fid);
    close_fid(&endpoint->fid);
}

Endpoint::QueueDepths Endpoint::queue_depths(const fi_info& info, const EndpointOptions& options) {
    return {capped(options.tx_depth, info.tx_attr->size),
            capped(options.rx_depth, info.rx_attr->size)};
}

Error Endpoint::with_peer(Error error, const fi_info& info, const EndpointOptions& options) {
    error.add_context(fmt::format("fabric connection with {}", peer_name(info, options)));
    return error;
}

Result<Endpoint> Endpoint::open(const Domain& domain, const fi_info& info, EventQueue& events,
                                CompletionQueue& completions, const EndpointOptions& options) {
    Endpoint endpoint;
    endpoint.capabilities_ = Capabilities::from_info(info);
    endpoint.peer_ = peer_name(info, options);
    auto copy = duplicate_info(info);
    if (!copy)
        return fail(std::move(copy.error()));
    endpoint.info_ = std::move(*copy);
    const QueueDepths depths = queue_depths(info, options);
    endpoint.info_->tx_attr->size = depths.tx;
    endpoint.info_->rx_attr->size = depths.rx;
    endpoint.tx_depth_ = depths.tx;
    endpoint.rx_depth_ = depths.rx;
    endpoint.cq_ = &completions;
    endpoint.state_ = std::make_shared<ConnectionState>(completions.get());
    endpoint.events_ = &events;
    endpoint.connect_slice_ = options.wait.slice;

    fid_ep* opened = nullptr;
    int ret = fi_endpoint(domain.get(), endpoint.info_.get(), &opened, nullptr);
    if (ret != 0)
        return fail(endpoint.with_peer(fabric_error(ret, "fi_endpoint")));
    endpoint.ep_ = {opened, EndpointCloser{&events}};
    ret = fi_ep_bind(opened, &events.get()->fid, 0);
    if (ret == 0)
        ret = fi_ep_bind(opened, &completions.get()->fid,
                         FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
    if (ret != 0)
        return fail(endpoint.with_peer(fabric_error(ret, "fi_ep_bind")));
    ret = fi_enable(opened);
    if (ret != 0)
        return fail(endpoint.with_peer(fabric_error(ret, "fi_enable")));

    std::size_t cm_data_size = 0;
    std::size_t option_length = sizeof cm_data_size;
    if (fi_getopt(&opened->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &cm_data_size,
                  &option_length) == 0)
        endpoint.max_private_data_ = cm_data_size;
    else
        endpoint.max_private_data_ = endpoint.capabilities_.max_private_data;

    events.watch(&opened->fid, endpoint.state_);
    return endpoint;
}

Error Endpoint::with_peer(Error error) const {
    error.add_context(fmt::format("fabric connection with {}", peer_));
    return error;
}

Result<void> Endpoint::connect(std::span<const std::byte> private_data) {
    if (state_->phase() != ConnectionState::Phase::idle)
        return fail(with_peer(Error(EINVAL, "connect: endpoint already connecting or used")));
    if (private_data.size() > max_private_data_)
        return fail(
            with_peer(Error(EMSGSIZE, fmt::format("connect: {} bytes of private data, "
                                                  "the provider carries {}",
                                                  private_data.size(), max_private_data_))));
    state_->mark_connecting();
    const int ret =
        fi_connect(ep_.get(), info_->dest_addr,
                   private_data.empty() ? nullptr : private_data.data(), private_data.size());
    if (ret != 0) {
        Error error = fabric_error(ret, "fi_connect");
        state_->fail(error);
        return fail(with_peer(std::move(error)));
    }
    return {};
}

Result<void> Endpoint::accept(std::span<const std::byte> private_data) {
    if (state_->phase() != ConnectionState::Phase::idle)
        return fail(with_peer(Error(EINVAL, "accept: endpoint already connecting or used")));
    if (private_data.size() > max_private_data_)
        return fail(
            with_peer(Error(EMSGSIZE, fmt::format("accept: {} bytes of private data, "
                                                  "the provider carries {}",
                                                  private_data.size(), max_private_data_))));
    state_->mark_connecting();
    const int ret = fi_accept(ep_.get(), private_data.empty() ? nullptr : private_data.data(),
                              private_data.size());
    if (ret != 0) {
        Error error = fabric_error(ret, "fi_accept");
        state_->fail(error);
        return fail(with_peer(std::move(error)));
    }
    return {};
}

Result<void> Endpoint::wait_connected(Deadline deadline) {
    for (;;) {
        switch (state_->phase()) {
        case ConnectionState::Phase::connected:
            return {};
        case ConnectionState::Phase::failed:
            return fail(with_peer(state_->failure()));
        case ConnectionState::Phase::idle:
            return fail(with_peer(Error(EINVAL, "wait_connected before connect or accept")));
        case ConnectionState::Phase::connecting:
            break;
        }
        const int block_ms = milliseconds_until(deadline, connect_slice_);
        if (block_ms == 0)
            return fail(with_peer(Error(ETIMEDOUT,
                                        "connection not established before the "
                                        "deadline",
                                        ErrorSource::fabric, FI_ETIMEDOUT)));
        auto pumped = events_->pump(std::chrono::milliseconds(block_ms));
        if (!pumped)
            return fail(with_peer(std::move(pumped.error())));
    }
}

Result<void> Endpoint::shutdown() {
    const int ret = fi_shutdown(ep_.get(), 0);
    state_->fail(
        Error(ECONNRESET, "connection shut down locally", ErrorSource::fabric, FI_ECONNRESET));
    if (ret != 0)
        return fail(with_peer(connection_error(ret, "fi_shutdown", {})));
    return {};
}

Result<void> Endpoint::usable(const char* operation) {
    ConnectionState::Phase phase = state_->phase();
    if (phase == ConnectionState::Phase::connected)
        return {};
    if (phase == ConnectionState::Phase::connecting) {
        // The peer may already use a connection whose FI_CONNECTED nobody has read yet (a
        // target answering the first message of a lane): read the event queue once.
        if (auto pumped = events_->pump(); !pumped)
            return fail(with_peer(std::move(pumped.error())));
        phase = state_->phase();
        if (phase == ConnectionState::Phase::connected)
            return {};
    }
    if (phase == ConnectionState::Phase::failed)
        return fail(with_peer(state_->failure().add_context(operation)));
    return fail(with_peer(Error(ENOTCONN, fmt::format("{}: not connected", operation))));
}

Error Endpoint::post_failure(int code, const char* operation) {
    // The provider may have refused because the connection broke: its event says why.
    (void)events_->pump();
    if (state_->failed())
        return state_->failure().add_context(operation);
    Error error = connection_error(code, operation, {});
    if (error.errno_value() == ECONNRESET)
        state_->fail(error);
    return error;
}

ssize_t Endpoint::post(const Transmit& transmit, std::uint64_t flags, void* context) noexcept {
    iovec local = transmit.local;
    void* descriptor = transmit.descriptor;
    const std::uint64_t all_flags = flags | transmit.extra_flags;
    if (transmit.kind == Transmit::Kind::send) {
        fi_msg message{};
        message.msg_iov = &local;
        message.desc = &descriptor;
        message.iov_count = 1;
        message.context = context;
        return fi_sendmsg(ep_.get(), &message, all_flags);
    }
    fi_rma_iov remote = transmit.remote;
    fi_msg_rma message{};
    message.msg_iov = &local;
    message.desc = &descriptor;
    message.iov_count = 1;
    message.rma_iov = &remote;
    message.rma_iov_count = 1;
    message.context = context;
    return transmit.kind == Transmit::Kind::write ? fi_writemsg(ep_.get(), &message, all_flags)
                                                  : fi_readmsg(ep_.get(), &message, all_flags);
}

Result<Endpoint::Transmit> Endpoint::rma_write(const MemoryRegion& source,
                                               std::size_t source_offset, std::size_t length,
                                               const RemoteRegion& target,
                                               std::uint64_t target_offset, bool wants_completion,
                                               void* context) const {
    const char* operation = "RMA write";
    if (!source.contains(source_offset, length) || !target.contains(target_offset, length))
        return fail(
            with_peer(Error(EINVAL, fmt::format("{} of {} bytes from offset {} to "
                                                "offset {}: outside the regions",
                                                operation, length, source_offset, target_offset))));
    if (length > capabilities_.max_msg_size)
        return fail(
            with_peer(Error(EMSGSIZE, fmt::format("{} of {} bytes: the provider moves "
                                                  "at most {}",
                                                  operation, length, capabilities_.max_msg_size))));
    Transmit transmit;
    transmit.kind = Transmit::Kind::write;
    transmit.operation = operation;
    transmit.local = {source.data() + source_offset, length};
    transmit.descriptor = source.descriptor();
    transmit.remote = {target.remote_address(target_offset), length, target.key};
    transmit.wants_completion = wants_completion;
    transmit.context = context;
    return transmit;
}

Result<Endpoint::Transmit> Endpoint::committed_write(const MemoryRegion& source,
                                                     std::size_t source_offset, std::size_t length,
                                                     const RemoteRegion& target,
                                                     std::uint64_t target_offset,
                                                     void* context) const {
    if (!capabilities_.commit_complete)
        return fail(with_peer(Error(EOPNOTSUPP, fmt::format("provider {} does not honour "
                                                            "FI_COMMIT_COMPLETE",
                                                            capabilities_.provider))));
    auto transmit = rma_write(source, source_offset, length, target, target_offset, true, context);
    if (transmit) {
        transmit->operation = "committed RMA write";
        transmit->extra_flags = FI_COMMIT_COMPLETE;
    }
    return transmit;
}

Result<Endpoint::Transmit> Endpoint::rma_read(const MemoryRegion& target, std::size_t target_offset,
                                              std::size_t length, const RemoteRegion& source,
                                              std::uint64_t source_offset, void* context) const {
    if (!target.contains(target_offset, length) || !source.contains(source_offset, length))
        return fail(with_peer(Error(EINVAL, fmt::format("RMA read of {} bytes from offset {} "
                                                        "to offset {}: outside the regions",
                                                        length, source_offset, target_offset))));
    Transmit transmit;
    transmit.kind = Transmit::Kind::read;
    transmit.operation = "RMA read";
    transmit.local = {target.data() + target_offset, length};
    transmit.descriptor = target.descriptor();
    transmit.remote = {source.remote_address(source_offset), length, source.key};
    transmit.context = context;
    return transmit;
}

Result<Endpoint::Transmit> Endpoint::message(const MemoryRegion& source, std::size_t offset,
                                             std::size_t length, bool wants_completion,
                                             void* context) const {
    if (!source.contains(offset, length))
        return fail(with_peer(Error(EINVAL, fmt::format("send of {} bytes from offset {}: "
                                                        "outside the region",
                                                        length, offset))));
    Transmit transmit;
    transmit.kind = Transmit::Kind::send;
    transmit.operation = "send";
    transmit.local = {source.data() + offset, length};
    transmit.descriptor = source.descriptor();
    transmit.wants_completion = wants_completion;
    transmit.context = context;
    return transmit;
}

Result<void> Endpoint::post_receive(const MemoryRegion& target, std::size_t offset,
                                    std::size_t length, void* context) {
    if (!target.contains(offset, length))
        return fail(with_peer(Error(EINVAL, fmt::format("receive of {} bytes at offset {}: "
                                                        "outside the region",
                                                        length, offset))));
    if (state_->failed())
        return fail(with_peer(state_->failure().add_context("receive")));
    iovec iov{target.data() + offset, length};
    void* descriptor = target.descriptor();
    fi_msg message{};
    message.msg_iov = &iov;
    message.desc = &descriptor;
    message.iov_count = 1;
    message.context = context;
    const ssize_t ret = fi_recvmsg(ep_.get(), &message, FI_COMPLETION);
    if (ret != 0)
        return fail(with_peer(post_failure(static_cast<int>(ret), "receive")));
    return {};
}

} // namespace rpmem::fabric
