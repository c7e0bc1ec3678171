// SPDX-License-Identifier: BSD-3-Clause
#include "client/replica_session.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "channel/client.h"
#include "client/control.h"
#include "client/lane_set.h"
#include "protocol/request.h"

namespace rpmem::client {

namespace {

constexpr unsigned kMaxDefaultLanes = 16;

protocol::ProviderPreference provider_preference(const Settings& settings) {
    if (auto named = protocol::provider_preference_from_name(settings.provider))
        return *named;
    return settings.enable_verbs ? protocol::ProviderPreference::any
                                 : protocol::ProviderPreference::tcp;
}

} // namespace

ReplicaSession::~ReplicaSession() {
    lanes.reset();
    if (control)
        control->close();
}

// A lane per core keeps every core busy; more only queue.
unsigned lanes_to_request(unsigned wanted, const Settings& settings) {
    unsigned cap = settings.max_lanes;
    if (cap == 0)
        cap = std::clamp(std::thread::hardware_concurrency(), 1U, kMaxDefaultLanes);
    return std::max(1U, std::min(wanted, cap));
}

Result<std::unique_ptr<ReplicaSession>>
start_session(const Settings& settings, const Target& target, const SessionRequest& request) {
    const std::string where = fmt::format("{}:{}", target.host, target.port.value_or(kDefaultPort));
    auto session = std::make_unique<ReplicaSession>();
    auto control =
        connect_control(settings, target, [flag = &session->channel_failed](const Error&) {
            flag->store(true, std::memory_order_release);
        });
    if (!control)
        return fail(std::move(control.error()));
    session->control = std::move(*control);
    channel::Client& channel = *session->control;

    protocol::DataPath data_path;
    if (request.create) {
        protocol::CreateRequest create{.pool_set = std::string(request.pool_set),
                                       .pool_size = request.pool.size(),
                                       .lanes = request.lanes,
                                       .provider = provider_preference(settings),
                                       .persist_method = settings.method};
        if (request.create_attributes != nullptr)
            create.attributes = *request.create_attributes;
        auto reply = channel::expect<protocol::CreateReply>(
            channel.call(create), fmt::format("{}: creating pool set {}", where, request.pool_set));
        if (!reply)
            return fail(std::move(reply.error()));
        data_path = reply->data_path;
        session->generation = reply->generation;
        session->has_headers = !create.attributes.is_zero();
    } else {
        protocol::OpenRequest open{.pool_set = std::string(request.pool_set),
                                   .pool_size = request.pool.size(),
                                   .lanes = request.lanes,
                                   .provider = provider_preference(settings),
                                   .persist_method = settings.method,
                                   .expected_generation = request.expected_generation};
        auto reply = channel::expect<protocol::OpenReply>(
            channel.call(open), fmt::format("{}: opening pool set {}", where, request.pool_set));
        if (!reply)
            return fail(std::move(reply.error()));
        data_path = reply->data_path;
        session->generation = reply->generation;
        session->found_state = reply->state;
        session->attributes = reply->attributes;
        session->has_headers = !reply->attributes.is_zero();
    }

    auto connected =
        LaneSet::connect(data_path, channel.peer_address(), request.pool, settings,
                         std::min(request.lanes, data_path.lanes), &session->channel_failed);
    if (!connected) {
        // Leave nothing behind: a pool this call created is removed again (PMDK did the same).
        (void)channel.call(
            protocol::CloseRequest{.remove = request.create, .untouched = !request.create});
        return fail(std::move(connected.error()));
    }
    session->lanes = std::move(*connected);
    return session;
}

Result<std::vector<std::uint64_t>>
request_digests(channel::Client& control, std::string_view what, std::size_t offset,
                std::size_t length, std::size_t extent_size,
                const std::function<void(std::uint64_t bytes)>& on_progress) {
    if (auto problem = protocol::check_digest_extent_size(extent_size))
        return fail(EINVAL, fmt::format("{}: {}: {}", what, problem->field, problem->reason));
    if (offset + length < offset)
        return fail(EINVAL,
                    fmt::format("{}: offset: {} + length {} overflows", what, offset, length));
    // Each request covers a multiple of the extent size, so the extents of consecutive
    // requests line up with those of the whole range.
    const auto size = static_cast<std::uint32_t>(extent_size);
    const std::uint64_t span = protocol::digest_request_span(size);
    std::vector<std::uint64_t> digests;
    for (std::uint64_t done = 0; done < length;) {
        protocol::DigestRequest request{offset + done, std::min<std::uint64_t>(span, length - done),
                                        size};
        auto answer = control.call(request);
        // A daemon that predates digests answers with an error reply: say what it said.
        if (const auto* refused = answer ? std::get_if<protocol::ErrorReply>(&*answer) : nullptr)
            return fail(protocol::errno_of(refused->status),
                        fmt::format("{}: refused: {}", what, refused->message), ErrorSource::remote,
                        static_cast<int>(refused->status));
        auto reply = channel::expect<protocol::DigestReply>(std::move(answer), what);
        if (!reply)
            return fail(std::move(reply.error()));
        const std::uint64_t expected = (request.length + size - 1) / size;
        if (reply->digests.size() != expected)
            return fail(EPROTO, fmt::format("{}: the target sent {} digests for {} extents", what,
                                            reply->digests.size(), expected));
        digests.insert(digests.end(), reply->digests.begin(), reply->digests.end());
        done += request.length;
        if (on_progress)
            on_progress(request.length);
    }
    return digests;
}

} // namespace rpmem::client
