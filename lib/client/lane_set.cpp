// SPDX-License-Identifier: BSD-3-Clause
#include "client/lane_set.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "fabric/own_queue_endpoint.h"
#include "protocol/lane_binding.h"

namespace rpmem::client {

namespace {

constexpr std::size_t kBounceSize = 256 * 1024;

} // namespace

LaneSet::~LaneSet() {
    // Tell the target each lane is done before the endpoints close.
    for (auto& lane : lanes_)
        lane->shutdown();
    lanes_.clear();
}

Result<std::unique_ptr<LaneSet>> LaneSet::connect(const protocol::DataPath& data_path,
                                                  std::string_view control_host,
                                                  std::span<std::byte> pool,
                                                  const Settings& settings, unsigned lanes,
                                                  const std::atomic<bool>* abort) {
    std::unique_ptr<LaneSet> set(new LaneSet());
    if (auto opened = set->open(data_path, control_host, pool, settings, lanes, abort); !opened)
        return fail(std::move(opened.error()));
    return set;
}

Result<void> LaneSet::open(const protocol::DataPath& data_path, std::string_view control_host,
                           std::span<std::byte> pool, const Settings& settings, unsigned lanes,
                           const std::atomic<bool>* abort) {
    const std::string host = data_path.host.empty() ? std::string(control_host) : data_path.host;
    const std::string peer = fmt::format("{}:{}", host, data_path.port);
    if (lanes == 0)
        return fail(EPROTO, fmt::format("{}: the target granted no lanes", peer),
                    ErrorSource::protocol);
    if (data_path.persist_method == protocol::PersistMethod::any)
        return fail(EPROTO, fmt::format("{}: the target chose no persistence method", peer),
                    ErrorSource::protocol);
    if (data_path.pool_size < pool.size())
        return fail(EFBIG, fmt::format("{}: the remote pool has {} bytes, fewer than the {} of "
                                       "the local pool",
                                       peer, data_path.pool_size, pool.size()));
    if (data_path.inline_buffer_size < 64 || data_path.inline_buffer_size > (64U << 20))
        return fail(
            EPROTO,
            fmt::format("{}: unusable inline buffer size {}", peer, data_path.inline_buffer_size),
            ErrorSource::protocol);

    auto step = [&](Error error, std::string_view what) {
        return std::move(error).add_context(fmt::format("{}: {}", peer, what));
    };
    auto stack = fabric::Stack::open(
        {data_path.provider, fabric::Role::connector, host, std::to_string(data_path.port), {}});
    if (!stack)
        return fail(
            step(std::move(stack.error()), fmt::format("fabric provider {}", data_path.provider)));
    stack_ = std::move(*stack);

    auto pool_region = fabric::MemoryRegion::register_memory(
        stack_->domain(), pool.data(), pool.size(), fabric::access::kWriteSource);
    if (!pool_region)
        return fail(step(std::move(pool_region.error()), "registering the local pool"));
    pool_region_.emplace(std::move(*pool_region));

    const std::size_t per_lane =
        persist::InitiatorLane::buffer_size(data_path.inline_buffer_size, kBounceSize);
    auto buffers = PageBuffer::allocate(lanes * per_lane);
    if (!buffers)
        return fail(std::move(buffers.error()).add_context(fmt::format("{}: lane buffers", peer)));
    buffers_ = std::move(*buffers);
    auto buffer_region = fabric::MemoryRegion::register_memory(
        stack_->domain(), buffers_.data(), buffers_.size(),
        fabric::access::kSendSource | fabric::access::kReceiveTarget | fabric::access::kReadTarget);
    if (!buffer_region)
        return fail(step(std::move(buffer_region.error()), "registering the lane buffers"));
    buffer_region_.emplace(std::move(*buffer_region));

    // Post every lane's connection request first, then wait for each: the handshakes overlap.
    fabric::EndpointOptions options;
    // An hour of spinning means "never block" (the benchmarks' setting).
    options.wait.spin =
        settings.spin >= std::chrono::hours(1) ? fabric::WaitPolicy::kSpinForever : settings.spin;
    options.tx_depth = settings.work_queue_size;
    options.rx_depth = protocol::kLaneCredits;
    options.tx_timeout = settings.timeout;
    options.peer = peer;
    std::vector<fabric::OwnQueueEndpoint> endpoints;
    endpoints.reserve(lanes);
    for (unsigned lane = 0; lane < lanes; ++lane) {
        auto endpoint = fabric::OwnQueueEndpoint::create(stack_->domain(), stack_->info(),
                                                         stack_->events(), options);
        if (!endpoint)
            return fail(step(std::move(endpoint.error()), fmt::format("opening lane {}", lane)));
        const protocol::LaneBinding binding{data_path.token, lane};
        if (auto posted = endpoint->connect(protocol::encode(binding)); !posted)
            return fail(step(std::move(posted.error()), fmt::format("connecting lane {}", lane)));
        endpoints.push_back(std::move(*endpoint));
    }
    const fabric::Deadline deadline = fabric::deadline_after(settings.connect_timeout);
    for (unsigned lane = 0; lane < lanes; ++lane) {
        if (auto up = endpoints[lane].wait_connected(deadline); !up)
            return fail(step(std::move(up.error()), fmt::format("connecting lane {}", lane)));
    }

    persist::InitiatorConfig config;
    config.method = data_path.persist_method;
    config.inline_size = data_path.inline_buffer_size;
    config.bounce_size = kBounceSize;
    const std::uint64_t max_msg_size = stack_->capabilities().max_msg_size;
    config.max_write = max_msg_size != 0 ? max_msg_size : (1ULL << 30);
    config.timeout = settings.timeout;
    config.wait = options.wait;
    config.abort = abort;
    config.target = peer;
    const fabric::RemoteRegion remote{data_path.remote_base, data_path.remote_key,
                                      data_path.pool_size};
    for (unsigned lane = 0; lane < lanes; ++lane) {
        auto initiator = std::make_unique<persist::InitiatorLane>(
            lane, std::move(endpoints[lane]), *pool_region_, remote, *buffer_region_,
            lane * per_lane, config);
        if (auto started = initiator->start(); !started)
            return fail(std::move(started.error()));
        lanes_.push_back(std::move(initiator));
    }
    return {};
}

} // namespace rpmem::client
