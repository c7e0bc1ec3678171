// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include "base/target.h"
#include "json_text.h"
#include "protocol/daemon_event.h"
#include "protocol/reply.h"

namespace rpmem::tools {

// The JSON documents of `rpmemctl status --json` and `rpmemctl events`, one place for their
// field names (the README lists them; they are added to, never renamed). Pure.

// {"target", "daemon": {...}, "sessions": [...]}.
Json status_json(const Target& target, const protocol::StatusReply& status);

// One session of the status, also the body of an "exists" event line.
Json session_json(const protocol::SessionStatus& session);

// One event line: {"sequence", "time", "kind", "session", "identity", "peer", ...}.
Json event_json(const protocol::DaemonEvent& event);

} // namespace rpmem::tools
