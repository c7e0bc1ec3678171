// SPDX-License-Identifier: BSD-3-Clause
#include "client/control.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "protocol/request.h"

namespace rpmem::client {

Result<std::unique_ptr<channel::Client>>
connect_control(const Settings& settings, const Target& target,
                std::function<void(const Error&)> on_failure) {
    const std::string where = target.to_string();
    if (settings.tls_ca.empty() || settings.tls_cert.empty() || settings.tls_key.empty())
        return fail(EINVAL,
                    fmt::format("connecting to {}: TLS credentials are not configured (set "
                                "RPMEM_TLS_CA, RPMEM_TLS_CERT and RPMEM_TLS_KEY, or tls-ca, "
                                "tls-cert and tls-key in ~/.config/rpmem/client.conf; rpmemctl "
                                "init DIR makes them)",
                                where));

    channel::ClientConfig config;
    config.host = target.host;
    config.port = target.port.value_or(kDefaultPort);
    config.tls = {settings.tls_ca, settings.tls_cert, settings.tls_key};
    config.connect_timeout = settings.connect_timeout;
    config.handshake_timeout = settings.connect_timeout;
    config.request_timeout = std::max(settings.timeout, settings.connect_timeout);
    // A silent target is declared dead within the operation timeout, as a stalled lane is.
    config.heartbeat_timeout = settings.timeout;
    config.heartbeat_interval = std::clamp(settings.timeout / 4, std::chrono::milliseconds(1),
                                           std::chrono::milliseconds(1000));
    config.software = "librpmem " RPMEM_VERSION;
    config.on_failure = std::move(on_failure);

    auto client = channel::Client::connect(std::move(config));
    if (!client)
        return fail(std::move(client.error()));
    const std::string& identity = (*client)->hello().identity;
    if (!target.user.empty() && target.user != identity)
        return fail(EACCES, fmt::format("connecting to {}: the target names user '{}' but this "
                                        "client's certificate identity is '{}'",
                                        where, target.user, identity));
    return std::move(*client);
}

Result<void> remove(const Settings& settings, const Target& target, std::string_view pool_set,
                    const RemoveOptions& options) {
    auto control = connect_control(settings, target);
    if (!control)
        return fail(std::move(control.error()));
    protocol::RemoveRequest request{.pool_set = std::string(pool_set),
                                    .force = options.force,
                                    .remove_set_file = options.remove_set_file};
    auto reply = channel::expect<protocol::RemoveReply>(
        (*control)->call(request),
        fmt::format("removing pool set {} on {}", pool_set, target.to_string()));
    (*control)->close();
    if (!reply)
        return fail(std::move(reply.error()));
    return {};
}

Result<protocol::StatusReply> status(channel::Client& control, const Target& target) {
    const std::string step = fmt::format("asking {} for its status", target.to_string());
    auto first =
        channel::expect<protocol::StatusReply>(control.call(protocol::StatusRequest{}), step);
    if (!first)
        return fail(std::move(first.error()));
    // The sessions come a page at a time; sessions opening or closing meanwhile shift the
    // pages, so the list is a good view, not an atomic one.
    protocol::StatusReply whole = std::move(*first);
    while (whole.session_list.size() < whole.visible_sessions) {
        auto page = channel::expect<protocol::StatusReply>(
            control.call(
                protocol::StatusRequest{static_cast<std::uint32_t>(whole.session_list.size())}),
            step);
        if (!page)
            return fail(std::move(page.error()));
        if (page->session_list.empty())
            break;
        whole.visible_sessions = page->visible_sessions;
        for (auto& session : page->session_list)
            whole.session_list.push_back(std::move(session));
    }
    whole.first_session = 0;
    return whole;
}

Result<protocol::StatusReply> status(const Settings& settings, const Target& target) {
    auto control = connect_control(settings, target);
    if (!control)
        return fail(std::move(control.error()));
    auto reply = status(**control, target);
    (*control)->close();
    return reply;
}

Result<protocol::EventsReply> events_after(channel::Client& control, const Target& target,
                                           std::uint64_t after_sequence) {
    return channel::expect<protocol::EventsReply>(
        control.call(protocol::EventsRequest{after_sequence}),
        fmt::format("asking {} for its events", target.to_string()));
}

} // namespace rpmem::client
