// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/daemon_session.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "base/log_text.h"
#include "channel/session_token.h"
#include "persist/method_choice.h"
#include "poolset/pool_header.h"
#include "protocol/message_limits.h"
#include "protocol/version.h"
#include "rpmemd/supervisor/client_message.h"
#include "rpmemd/supervisor/local_address.h"
#include "rpmemd/supervisor/pool_digest.h"
#include "rpmemd/supervisor/status_error.h"

namespace rpmem::daemon {

namespace {

using protocol::Reply;
using protocol::Status;

template <typename... Handlers>
struct Overloaded : Handlers... {
    using Handlers::operator()...;
};
// Spelt out for clang 14, which does not deduce aggregates' template arguments yet.
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

// The status for a data plane that would not start, after PMDK's rpmemd: a provider the client
// asked for that this host cannot open is a bad provider (PMDK: fi_getinfo failed), no usable
// provider at all is an unsupported one, a listener that cannot be set up a connection
// failure, anything else fatal.
Status data_plane_status(const Error& error, protocol::ProviderPreference asked) {
    if (error.source() == ErrorSource::remote)
        return reply_status_for(error, Status::bad_provider);
    switch (error.errno_value()) {
    case EMEDIUMTYPE:
        return asked == protocol::ProviderPreference::any ? Status::provider_unsupported
                                                          : Status::bad_provider;
    case EINVAL:
    case ENODATA:
    case ENOENT:
    case ENOSYS:
    case EOPNOTSUPP:
        return Status::bad_provider;
    case EADDRINUSE:
    case EADDRNOTAVAIL:
    case ECONNABORTED:
    case ECONNREFUSED:
    case ENETUNREACH:
    case EHOSTUNREACH:
        return Status::fatal_connection;
    default:
        return Status::fatal;
    }
}

// `text` cut to what a protocol field of `limit` bytes carries (escaped when cut).
std::string clip(std::string_view text, std::size_t limit) {
    if (text.size() <= limit)
        return std::string(text);
    return escape_for_log(text, limit - 32);
}

std::string peer_text(const channel::PeerInfo& peer) {
    return escape_for_log(peer.identity) + "@" + channel::endpoint_text(peer);
}

} // namespace

DaemonSession::DaemonSession(const SessionServices& services, channel::PeerInfo peer)
    : services_(services)
    , peer_(std::move(peer))
    , log_name_(fmt::format("session {} ({})", peer_.session_id, peer_text(peer_)))
    , listing_(services_.directory.add(peer_)) {
    spdlog::debug("{}: session handler made", log_name_);
    record(protocol::EventKind::session_opened);
}

DaemonSession::~DaemonSession() {
    (void)release(false, in_sync_ ? CloseVerdict::lost_in_sync : CloseVerdict::lost);
}

Reply DaemonSession::handle(const protocol::Request& request) {
    return std::visit(
        Overloaded{
            [this](const protocol::CreateRequest& r) { return create(r); },
            [this](const protocol::OpenRequest& r) { return open(r); },
            [this](const protocol::CloseRequest& r) { return close(r); },
            [this](const protocol::SetAttrRequest& r) { return set_attr(r); },
            [this](const protocol::RemoveRequest& r) { return remove(r); },
            [this](const protocol::StatusRequest& r) { return status(r); },
            [this](const protocol::DigestRequest& r) { return digest(r); },
            [this](const protocol::EventsRequest& r) { return events(r); },
            [this](const protocol::ResyncReport& r) { return resync_report(r); },
            [this](const protocol::PromoteRequest& r) { return promote(r); },
            [this](const protocol::DemoteRequest& r) { return demote(r); },
            [this](const protocol::RejoinRequest& r) { return rejoin(r); },
            [this](const protocol::AttachReplicaRequest& r) { return attach_replica(r); },
            [](const auto& r) {
                // Hello and Ping belong to the channel and never get here.
                return protocol::failure_reply(std::decay_t<decltype(r)>::kType,
                                               Status::invalid_request,
                                               "this request is answered by the channel");
            },
        },
        request);
}

void DaemonSession::on_close(const Error& reason) noexcept {
    // The channel logs why it ended; what matters here is the pool that goes with it.
    if (pool_)
        spdlog::info("{}: releasing pool set '{}' of the closed channel ({})", log_name_,
                     escape_for_log(pool_->name()), escape_for_log(reason.message()));
    else
        spdlog::debug("{}: channel closed: {}", log_name_, escape_for_log(reason.message()));
    // With a pool open the session did not end by the protocol: the replica is left behind.
    const bool lost = pool_ != nullptr;
    if (lost)
        record(protocol::EventKind::session_lost, reason.message());
    (void)release(false, in_sync_ ? CloseVerdict::lost_in_sync : CloseVerdict::lost);
    if (!lost)
        record(protocol::EventKind::session_closed, reason.message());
}

Result<void> DaemonSession::check_open_request(std::uint32_t lanes,
                                               protocol::ProviderPreference provider) const {
    if (pool_)
        return fail(status_error(Status::invalid_request,
                                 fmt::format("this session already has pool set '{}' open; "
                                             "close it first",
                                             escape_for_log(pool_->name()))));
    if (lanes == 0)
        return fail(status_error(Status::bad_lanes, "at least one lane is needed"));
    const auto& allowed = services_.config.allowed_providers;
    if (provider != protocol::ProviderPreference::any && !allowed.empty() &&
        std::find(allowed.begin(), allowed.end(), protocol::name_of(provider)) == allowed.end())
        return fail(
            status_error(Status::provider_unsupported,
                         fmt::format("provider '{}' is not offered here (allowed: {})",
                                     protocol::name_of(provider), fmt::join(allowed, ", "))));
    return {};
}

std::string DaemonSession::bind_host() const {
    const Config& config = services_.config;
    if (!config.fabric_host.empty())
        return config.fabric_host;
    if (!is_wildcard_address(config.listen_host))
        return config.listen_host;
    // channel::PeerInfo does not carry the address the connection arrived on; the route back
    // to the client gives the same address except with asymmetric routing.
    if (auto local = local_address_towards(peer_.address))
        return *local;
    return "127.0.0.1";
}

Result<protocol::DataPath> DaemonSession::start_data_plane(OpenPool& pool, std::uint32_t lanes,
                                                           protocol::ProviderPreference provider,
                                                           protocol::PersistMethod method,
                                                           std::string& note) {
    auto token = channel::make_session_token();
    if (!token)
        return fail(with_status(std::move(token.error()), Status::fatal));

    DataPlaneRequest request;
    request.provider = provider;
    request.allowed_providers = services_.config.allowed_providers;
    request.bind_host = bind_host();
    request.pool = &pool.mapping();
    request.protected_prefix = pool.protected_prefix();
    request.lanes = std::min<unsigned>(lanes, services_.config.max_lanes);
    request.token = *token;
    request.session_name = fmt::format("session {}", peer_.session_id);
    request.identity = peer_.identity;
    request.responder_spin = services_.config.responder_spin;
    request.reply_delay = services_.config.inject_reply_delay;
    // Its worker died: the lanes are gone, so the session ends too (the client learns it from
    // its lanes at once and from the channel), and on_close releases the pool.
    request.on_lost = [end = end_, name = log_name_](const Error& why) {
        spdlog::error("{}: data plane lost: {}", name, why.message());
        if (end)
            end(Error(ECONNRESET, "the session's data plane was lost: " + why.message(),
                      ErrorSource::system, ECONNRESET));
    };

    // Counting is worth a page per session, not a session: without the page it runs uncounted.
    if (auto counters = SharedCounterPage::create())
        request.counters = std::move(*counters);
    else
        spdlog::warn("{}: persists go uncounted in status and metrics: {}", log_name_,
                     counters.error().message());

    auto plane = services_.start_data_plane(request);
    if (plane && !*plane)
        plane = fail(EREMOTEIO, "the data plane factory returned nothing");
    if (!plane) {
        Error& error = plane.error();
        return fail(status_error(
            data_plane_status(error, provider),
            fmt::format("starting the data plane on {}: {}", request.bind_host, error.message())));
    }
    std::unique_ptr<DataPlane> data_plane = std::move(*plane);
    const DataPlaneInfo& info = data_plane->info();

    persist::MethodPolicy policy = services_.config.methods;
    policy.replies_only = services_.config.inject_reply_delay.count() > 0;
    auto choice = persist::choose_method(services_.config.platform, info.traits,
                                         pool.mapping().is_pmem(), policy, method);
    if (!choice) {
        data_plane->stop();
        return fail(status_error(reply_status_for(choice.error(), Status::invalid_request),
                                 "choosing the persistence method: " + choice.error().message()));
    }
    spdlog::info("{}: persistence method {}: {}", log_name_, protocol::name_of(choice->method),
                 choice->reason);

    protocol::DataPath path = info.data_path(choice->method, pool.mapping().size(), *token);
    spdlog::info("{}: data path {} {}:{}, {} lanes, {} pool bytes, {}", log_name_, path.provider,
                 path.host.empty() ? "(the control host)" : path.host, path.port, path.lanes,
                 path.pool_size, pool.mapping().is_pmem() ? "persistent memory" : "not pmem");
    note = std::move(choice->reason);
    data_plane_ = std::move(data_plane);
    counters_ = std::move(request.counters);
    return path;
}

Reply DaemonSession::refusal(protocol::MessageType type, std::string_view pool_set,
                             const Error& error) const {
    Status status = reply_status_for(error, Status::pool_config);
    spdlog::info("{}: {} '{}' refused: {}: {}", log_name_, protocol::name_of(type),
                 escape_for_log(pool_set), protocol::name_of(status),
                 escape_for_log(error.message()));
    // The message quotes client input (the errors quote names bounded already): cut it to
    // what the reply can carry rather than let the reply fail to encode.
    std::string message = client_message(error.message());
    if (message.size() > protocol::kMaxMessageLength)
        message = escape_for_log(message, protocol::kMaxMessageLength - 32);
    protocol::DaemonEvent event = event_of(protocol::EventKind::refused);
    event.pool_set = clip(pool_set, protocol::kMaxPoolSetNameLength);
    event.reason =
        clip(fmt::format("{}: {}: {}", protocol::name_of(type), protocol::name_of(status), message),
             protocol::kMaxMessageLength);
    services_.events.record(std::move(event));
    return protocol::failure_reply(type, status, std::move(message));
}

Result<protocol::DataPath> DaemonSession::serve_pool(Result<std::unique_ptr<OpenPool>> pool,
                                                     std::uint32_t lanes,
                                                     protocol::ProviderPreference provider,
                                                     protocol::PersistMethod method, bool created,
                                                     std::string& note) {
    if (!pool)
        return fail(std::move(pool.error()));
    auto path = start_data_plane(**pool, lanes, provider, method, note);
    if (!path) {
        // A pool created for a session that never got going is removed again, as PMDK did.
        if (auto closed = services_.store.close(std::move(*pool), created); !closed)
            spdlog::warn("{}: {}", log_name_, escape_for_log(closed.error().message()));
        return path;
    }
    pool_ = std::move(*pool);
    in_sync_ = created || pool_->found().state == protocol::ReplicaState::consistent;
    protocol::SessionStatus row;
    row.pool_set = clip(pool_->name(), protocol::kMaxPoolSetNameLength);
    row.provider = path->provider;
    row.persist_method = path->persist_method;
    row.method_reason = clip(note, protocol::kMaxMessageLength);
    row.lanes = path->lanes;
    // The state file says inconsistent from the open until a clean close.
    row.state = protocol::ReplicaState::inconsistent;
    row.generation = pool_->found().generation;
    listing_.set_pool(row);
    if (counters_)
        listing_.set_counters([page = counters_] { return std::optional(page->read()); });
    record_state(row.state, row.generation,
                 created
                     ? std::string("created")
                     : fmt::format("opened (it was {})", protocol::name_of(pool_->found().state)));
    return path;
}

Reply DaemonSession::create(const protocol::CreateRequest& request) {
    spdlog::info("{}: create '{}' (pool size {}, {} lanes, provider {}, method {}{})", log_name_,
                 escape_for_log(request.pool_set), request.pool_size, request.lanes,
                 protocol::name_of(request.provider), protocol::name_of(request.persist_method),
                 request.attributes.is_zero() ? ", no headers" : "");
    if (auto checked = check_open_request(request.lanes, request.provider); !checked)
        return refusal(protocol::MessageType::create, request.pool_set, checked.error());
    std::string note;
    auto path =
        serve_pool(services_.store.create({peer_.identity, request.pool_set, request.pool_size,
                                           peer_.session_id, 0, evictor()},
                                          request.attributes),
                   request.lanes, request.provider, request.persist_method, true, note);
    if (!path)
        return refusal(protocol::MessageType::create, request.pool_set, path.error());
    spdlog::info("{}: created pool set '{}'", log_name_, escape_for_log(request.pool_set));
    return protocol::CreateReply{Status::ok, std::move(note), std::move(*path),
                                 pool_->found().generation};
}

Reply DaemonSession::open(const protocol::OpenRequest& request) {
    spdlog::info("{}: open '{}' (pool size {}, {} lanes, provider {}, method {})", log_name_,
                 escape_for_log(request.pool_set), request.pool_size, request.lanes,
                 protocol::name_of(request.provider), protocol::name_of(request.persist_method));
    if (auto checked = check_open_request(request.lanes, request.provider); !checked)
        return refusal(protocol::MessageType::open, request.pool_set, checked.error());
    std::string note;
    auto path =
        serve_pool(services_.store.open({peer_.identity, request.pool_set, request.pool_size,
                                         peer_.session_id, request.expected_generation, evictor()}),
                   request.lanes, request.provider, request.persist_method, false, note);
    if (!path)
        return refusal(protocol::MessageType::open, request.pool_set, path.error());
    const ReplicaRecord& found = pool_->found();
    spdlog::info("{}: opened pool set '{}': replica {} at generation {}", log_name_,
                 escape_for_log(request.pool_set), protocol::name_of(found.state),
                 found.generation);
    return protocol::OpenReply{Status::ok,          std::move(note), std::move(*path),
                               pool_->attributes(), found.state,     found.generation};
}

Reply DaemonSession::close(const protocol::CloseRequest& request) {
    if (!pool_) {
        spdlog::info("{}: close refused: no pool is open", log_name_);
        return protocol::CloseReply{Status::invalid_request, "this session has no pool open"};
    }
    std::string name = pool_->name();
    // Only a pool this session created may be removed on close (PMDK's rule).
    bool remove = request.remove && pool_->created();
    std::string note = request.remove && !remove
                           ? "not removed: the pool was opened, not created, in this session"
                           : "";
    const CloseVerdict verdict = request.in_sync     ? CloseVerdict::in_sync
                                 : request.untouched ? CloseVerdict::untouched
                                                     : CloseVerdict::behind;
    spdlog::info("{}: close '{}'{} ({})", log_name_, escape_for_log(name),
                 remove ? " and remove it" : "",
                 request.in_sync     ? "replica in sync"
                 : request.untouched ? "nothing written"
                                     : "the initiator went on without it: outdated");
    if (auto released = release(remove, verdict); !released) {
        Status status = reply_status_for(released.error(), Status::fatal);
        return protocol::CloseReply{status, client_message(released.error().message())};
    }
    return protocol::CloseReply{Status::ok, std::move(note)};
}

Reply DaemonSession::set_attr(const protocol::SetAttrRequest& request) {
    if (!pool_) {
        spdlog::info("{}: set_attr refused: no pool is open", log_name_);
        return protocol::SetAttrReply{Status::invalid_request, "this session has no pool open"};
    }
    spdlog::info("{}: set_attr on '{}'", log_name_, escape_for_log(pool_->name()));
    if (auto set = services_.store.set_attributes(*pool_, request.attributes); !set) {
        Status status = reply_status_for(set.error(), Status::invalid_request);
        spdlog::info("{}: set_attr refused: {}: {}", log_name_, protocol::name_of(status),
                     escape_for_log(set.error().message()));
        return protocol::SetAttrReply{status, client_message(set.error().message())};
    }
    return protocol::SetAttrReply{Status::ok, {}};
}

Reply DaemonSession::remove(const protocol::RemoveRequest& request) {
    spdlog::info("{}: remove '{}'{}{}", log_name_, escape_for_log(request.pool_set),
                 request.force ? " (force)" : "",
                 request.remove_set_file ? " with its set file" : "");
    auto removed = services_.store.remove(peer_.identity, request.pool_set,
                                          {request.force, request.remove_set_file});
    if (!removed) {
        Status status = reply_status_for(removed.error(), Status::pool_config);
        spdlog::info("{}: remove '{}' refused: {}: {}", log_name_, escape_for_log(request.pool_set),
                     protocol::name_of(status), escape_for_log(removed.error().message()));
        return protocol::RemoveReply{status, client_message(removed.error().message())};
    }
    return protocol::RemoveReply{Status::ok, {}};
}

bool DaemonSession::sees_everything() const {
    const auto& admins = services_.config.admin_clients;
    return std::find(admins.begin(), admins.end(), peer_.identity) != admins.end();
}

protocol::DaemonEvent DaemonSession::event_of(protocol::EventKind kind) const {
    protocol::DaemonEvent event;
    event.kind = kind;
    event.session_id = peer_.session_id;
    event.identity = clip(peer_.identity, protocol::kMaxIdentityLength);
    event.peer = clip(channel::endpoint_text(peer_), protocol::kMaxPeerLength);
    if (pool_)
        event.pool_set = clip(pool_->name(), protocol::kMaxPoolSetNameLength);
    return event;
}

void DaemonSession::record(protocol::EventKind kind, std::string reason) const {
    protocol::DaemonEvent event = event_of(kind);
    event.reason = clip(reason, protocol::kMaxMessageLength);
    services_.events.record(std::move(event));
}

void DaemonSession::record_state(protocol::ReplicaState state, std::uint64_t generation,
                                 std::string reason) const {
    protocol::DaemonEvent event = event_of(protocol::EventKind::state_changed);
    event.has_state = true;
    event.state = state;
    event.generation = generation;
    event.reason = clip(reason, protocol::kMaxMessageLength);
    services_.events.record(std::move(event));
}

Reply DaemonSession::status(const protocol::StatusRequest& request) {
    protocol::StatusReply reply;
    reply.software = services_.software;
    reply.protocol_version = protocol::kProtocolVersion;
    reply.uptime_seconds =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::steady_clock::now() - services_.started)
                                       .count());
    auto count = [](const std::function<std::size_t()>& counter) {
        return static_cast<std::uint32_t>(counter ? counter() : 0);
    };
    reply.sessions = count(services_.session_count);
    reply.pools_in_use = static_cast<std::uint32_t>(services_.store.pools_in_use().size());
    reply.max_sessions = services_.config.max_sessions;
    reply.max_sessions_per_client = effective_max_sessions_per_client(services_.config);
    reply.pending_connections = count(services_.pending_count);
    reply.max_pending_connections = services_.config.max_pending_connections;
    reply.workers = count(services_.worker_count);
    // Other identities' pool set names and addresses are theirs, unless this is an admin.
    reply.all_identities = sees_everything();
    std::function<bool(std::string_view)> visible;
    if (!reply.all_identities)
        visible = [this](std::string_view identity) { return identity == peer_.identity; };
    auto sessions = services_.directory.snapshot(visible).sessions;
    reply.visible_sessions = static_cast<std::uint32_t>(sessions.size());
    reply.first_session = std::min<std::uint32_t>(request.first_session, reply.visible_sessions);
    const std::size_t end = std::min<std::size_t>(
        sessions.size(), std::size_t{reply.first_session} + protocol::kMaxStatusSessions);
    for (std::size_t i = reply.first_session; i < end; ++i)
        reply.session_list.push_back(std::move(sessions[i]));
    return reply;
}

Reply DaemonSession::events(const protocol::EventsRequest& request) {
    std::function<bool(const protocol::DaemonEvent&)> visible;
    if (!sees_everything())
        visible = [this](const protocol::DaemonEvent& event) {
            return event.identity == peer_.identity;
        };
    return services_.events.after(request.after_sequence, protocol::kMaxEventsPerReply, visible);
}

Reply DaemonSession::resync_report(const protocol::ResyncReport& request) {
    if (!pool_)
        return protocol::ResyncReportReply{Status::invalid_request,
                                           "this session has no pool open"};
    const bool active = request.phase == protocol::ResyncPhase::started ||
                        request.phase == protocol::ResyncPhase::progress;
    listing_.set_resync(active, request.done_bytes, request.total_bytes);
    protocol::EventKind kind = protocol::EventKind::resync_progress;
    std::string reason;
    switch (request.phase) {
    case protocol::ResyncPhase::started:
        kind = protocol::EventKind::resync_started;
        break;
    case protocol::ResyncPhase::progress: {
        // A client decides how often it reports; the log keeps at most one a second of it.
        const auto now = std::chrono::steady_clock::now();
        if (now - last_progress_event_ < std::chrono::seconds(1))
            return protocol::ResyncReportReply{};
        last_progress_event_ = now;
        break;
    }
    case protocol::ResyncPhase::finished:
        kind = protocol::EventKind::resync_finished;
        break;
    case protocol::ResyncPhase::failed:
        kind = protocol::EventKind::resync_finished;
        reason = "the initiator gave up; it retries or leaves the replica behind";
        break;
    }
    // The initiator reports a resync finished once the copy holds everything the replica
    // lacked, and persists synchronously from then on: the copy is in sync, as one found
    // consistent at the open (a loss of the session then leaves it promotable).
    if (request.phase == protocol::ResyncPhase::finished)
        in_sync_ = request.done_bytes == request.total_bytes;
    else if (request.phase != protocol::ResyncPhase::progress)
        in_sync_ = false;
    spdlog::info("{}: resync of '{}' {}: {} of {} bytes", log_name_, escape_for_log(pool_->name()),
                 protocol::name_of(request.phase), request.done_bytes, request.total_bytes);
    protocol::DaemonEvent event = event_of(kind);
    event.done_bytes = request.done_bytes;
    event.total_bytes = request.total_bytes;
    event.reason = std::move(reason);
    services_.events.record(std::move(event));
    return protocol::ResyncReportReply{};
}

Reply DaemonSession::digest(const protocol::DigestRequest& request) {
    if (!pool_) {
        spdlog::info("{}: digest refused: no pool is open", log_name_);
        return protocol::DigestReply{Status::invalid_request, "this session has no pool open", {}};
    }
    const poolset::PoolMapping& mapping = pool_->mapping();
    if (auto checked = check_digest_range(mapping.size(), pool_->protected_prefix(), request);
        !checked) {
        Status status = reply_status_for(checked.error(), Status::invalid_request);
        spdlog::info("{}: digest of [{}, +{}) refused: {}", log_name_, request.offset,
                     request.length, escape_for_log(checked.error().message()));
        return protocol::DigestReply{status, client_message(checked.error().message()), {}};
    }
    mapping.will_read(request.offset, request.length);
    auto digests = digest_pool_range({mapping.data(), mapping.size()}, request);
    spdlog::debug("{}: {} digests of [{}, +{}) in extents of {}", log_name_, digests.size(),
                  request.offset, request.length, request.extent_size);
    return protocol::DigestReply{Status::ok, {}, std::move(digests)};
}

Result<void> DaemonSession::release(bool remove, CloseVerdict verdict) noexcept {
    if (data_plane_) {
        data_plane_->stop(); // fence: no lane reaches the pool after this
        data_plane_.reset();
    }
    if (!pool_)
        return {};
    std::string name = pool_->name();
    const ReplicaRecord found = pool_->found();
    auto closed = services_.store.close(std::move(pool_), remove, verdict);
    if (!closed)
        spdlog::warn("{}: {}", log_name_, escape_for_log(closed.error().message()));
    else
        spdlog::info("{}: pool set '{}' {}", log_name_, escape_for_log(name),
                     remove ? "removed" : "closed");
    if (!remove) {
        auto after = state_after_close(verdict, found.state);
        protocol::DaemonEvent event = event_of(protocol::EventKind::state_changed);
        event.pool_set = clip(name, protocol::kMaxPoolSetNameLength);
        event.has_state = true;
        event.state = after.value_or(protocol::ReplicaState::inconsistent);
        event.generation = found.generation;
        event.reason = !closed ? "closed with an error: " + closed.error().message()
                       : verdict == CloseVerdict::lost ? "the session ended uncleanly"
                       : verdict == CloseVerdict::lost_in_sync
                           ? "the session ended uncleanly while in sync"
                           : "closed";
        event.reason = clip(event.reason, protocol::kMaxMessageLength);
        services_.events.record(std::move(event));
    }
    listing_.clear_pool();
    in_sync_ = false;
    return closed;
}

channel::SessionFactory make_session_factory(const SessionServices& services) {
    return [&services](
               const channel::PeerInfo& peer) -> Result<std::unique_ptr<channel::SessionHandler>> {
        return std::make_unique<DaemonSession>(services, peer);
    };
}

} // namespace rpmem::daemon
