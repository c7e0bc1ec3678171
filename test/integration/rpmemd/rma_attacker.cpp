// SPDX-License-Identifier: BSD-3-Clause
#include "rma_attacker.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <rdma/fi_rma.h>

#include "fabric/fabric_library.h"
#include "fabric/waiter.h"
#include "protocol/lane_binding.h"

namespace rpmem::test {

const char* name_of(RmaAttacker::Outcome outcome) noexcept {
    switch (outcome) {
    case RmaAttacker::Outcome::refused_locally:
        return "refused locally";
    case RmaAttacker::Outcome::acknowledged:
        return "acknowledged by the target";
    case RmaAttacker::Outcome::failed:
        return "failed";
    case RmaAttacker::Outcome::connection_lost:
        return "connection lost";
    case RmaAttacker::Outcome::timed_out:
        return "timed out";
    }
    return "?";
}

Result<std::unique_ptr<RmaAttacker>> RmaAttacker::create(const Options& options) {
    std::unique_ptr<RmaAttacker> attacker(new RmaAttacker());
    if (auto opened = attacker->open(options); !opened)
        return fail(std::move(opened.error()));
    return attacker;
}

RmaAttacker::~RmaAttacker() {
    if (lane_)
        (void)lane_->shutdown();
}

Result<void> RmaAttacker::open(const Options& options) {
    patience_ = options.patience;
    channel::ClientConfig config;
    config.host = "127.0.0.1";
    config.port = options.port;
    config.tls = options.tls;
    config.connect_timeout = options.patience;
    config.handshake_timeout = options.patience;
    config.request_timeout = options.patience;
    config.software = "rma-attacker";
    auto control = channel::Client::connect(std::move(config));
    if (!control)
        return fail(std::move(control.error()).add_context("attacker: control channel"));
    control_ = std::move(*control);

    protocol::CreateRequest create;
    create.pool_set = options.pool_set;
    create.pool_size = options.pool_size;
    create.lanes = 1;
    create.provider = options.provider;
    create.attributes = options.attributes;
    auto created =
        channel::expect<protocol::CreateReply>(control_->call(create), "attacker: create");
    if (!created)
        return fail(std::move(created.error()));
    data_path_ = created->data_path;

    const std::string host = data_path_.host.empty() ? control_->peer_address() : data_path_.host;
    auto stack = fabric::Stack::open(
        {data_path_.provider, fabric::Role::connector, host, std::to_string(data_path_.port), {}});
    if (!stack)
        return fail(std::move(stack.error()).add_context("attacker: fabric"));
    stack_ = std::move(*stack);

    buffer_ = std::make_unique<std::byte[]>(kBufferSize);
    auto region = fabric::MemoryRegion::register_memory(stack_->domain(), buffer_.get(),
                                                        kBufferSize, fabric::access::kWriteSource);
    if (!region)
        return fail(std::move(region.error()).add_context("attacker: registering its buffer"));
    buffer_region_.emplace(std::move(*region));

    fabric::EndpointOptions endpoint_options;
    endpoint_options.wait.spin = std::chrono::microseconds(0);
    endpoint_options.tx_timeout = options.patience;
    auto lane = fabric::OwnQueueEndpoint::create(stack_->domain(), stack_->info(), stack_->events(),
                                                 endpoint_options);
    if (!lane)
        return fail(std::move(lane.error()).add_context("attacker: lane endpoint"));
    protocol::LaneBinding binding;
    std::copy(data_path_.token.begin(), data_path_.token.end(), binding.token.begin());
    binding.lane = 0;
    if (auto posted = lane->connect(protocol::encode(binding)); !posted)
        return fail(std::move(posted.error()).add_context("attacker: connecting its lane"));
    if (auto up = lane->wait_connected(fabric::deadline_after(options.patience)); !up)
        return fail(std::move(up.error()).add_context("attacker: connecting its lane"));
    lane_.emplace(std::move(*lane));
    return {};
}

bool RmaAttacker::lane_failed() const noexcept {
    return !lane_ || lane_->state().failed();
}

RmaAttacker::WriteResult RmaAttacker::write(std::span<const RemoteSpan> remote,
                                            std::span<const std::byte> payload) {
    constexpr std::size_t kMaxSpans = 4;
    if (!lane_ || payload.size() > kBufferSize || remote.empty() || remote.size() > kMaxSpans)
        return {Outcome::refused_locally, "no lane, a payload larger than the buffer, or a "
                                          "remote I/O vector of no or too many entries"};
    if (lane_->state().failed())
        return {Outcome::connection_lost, lane_->state().failure().message()};
    std::copy(payload.begin(), payload.end(), buffer_.get());

    // Raw fi_writemsg: Endpoint::write() would (rightly) refuse a remote range that differs
    // from the local one. The provider copies the rma_iov into the wire header unchanged.
    iovec local{buffer_.get(), payload.size()};
    void* descriptor = buffer_region_->descriptor();
    std::array<fi_rma_iov, kMaxSpans> claimed{};
    for (std::size_t i = 0; i < remote.size(); ++i)
        claimed[i] = {remote[i].address, remote[i].length, data_path_.remote_key};
    fi_msg_rma message{};
    message.msg_iov = &local;
    message.desc = &descriptor;
    message.iov_count = 1;
    message.rma_iov = claimed.data();
    message.rma_iov_count = remote.size();
    // A fresh context per write: a late completion of an earlier write is never mistaken for
    // this one's.
    void* const context = reinterpret_cast<void*>(++last_context_);
    message.context = context;
    const ssize_t posted =
        fi_writemsg(lane_->get(), &message, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    if (posted != 0)
        return {Outcome::refused_locally,
                fmt::format("fi_writemsg: {}", fabric::fabric_strerror(-static_cast<int>(posted)))};

    // The lane's own queue serves only this write: wait for its completion, an error
    // completion, or the end of the connection (the waiter pumps the event queue).
    fabric::Waiter waiter(
        stack_->fabric().get(),
        fabric::WaitPolicy{std::chrono::microseconds(0), std::chrono::milliseconds(20)});
    const fabric::Deadline deadline = fabric::deadline_after(patience_);
    std::array<fabric::Completion, 4> completions;
    for (;;) {
        auto read = waiter.wait(lane_->completion_queue(), completions, &stack_->events(),
                                &lane_->state(), deadline);
        if (!read) {
            const fabric::CompletionError& failure = read.error();
            if (failure.context != nullptr)
                return {Outcome::failed, failure.error.message()};
            if (failure.error.errno_value() == ETIMEDOUT)
                return {Outcome::timed_out, failure.error.message()};
            return {Outcome::connection_lost, failure.error.message()};
        }
        for (std::size_t i = 0; i < *read; ++i) {
            if (completions[i].context == context)
                return {Outcome::acknowledged, {}};
        }
    }
}

} // namespace rpmem::test
