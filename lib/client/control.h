// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "base/error.h"
#include "base/target.h"
#include "channel/client.h"
#include "client/settings.h"
#include "protocol/reply.h"

namespace rpmem::client {

inline constexpr std::uint16_t kDefaultPort = 7636;

// Opens the TLS control channel to rpmemd at `target` with the settings' credentials and
// timeouts. When the target names a user (`user@host`), it must be the identity the daemon saw
// in our certificate, else EACCES. Errors name the target and the step.
// `on_failure` (optional) runs on the channel's thread when the channel fails later.
Result<std::unique_ptr<channel::Client>>
connect_control(const Settings& settings, const Target& target,
                std::function<void(const Error&)> on_failure = {});

// rpmem_remove()'s request: remove the pool described by `pool_set` on `target`.
struct RemoveOptions {
    bool force = false;           // ignore errors while removing parts
    bool remove_set_file = false; // also remove the pool set file
};
Result<void> remove(const Settings& settings, const Target& target, std::string_view pool_set,
                    const RemoveOptions& options);

// The daemon's status (version, limits, the sessions this client may see: every page of them).
Result<protocol::StatusReply> status(const Settings& settings, const Target& target);
Result<protocol::StatusReply> status(channel::Client& control, const Target& target);

// The daemon's events after `after_sequence` that this client may see (one EventsReply: ask
// again after the last one received, or after newest_sequence when fewer than
// kMaxEventsPerReply came).
Result<protocol::EventsReply> events_after(channel::Client& control, const Target& target,
                                           std::uint64_t after_sequence);

} // namespace rpmem::client
