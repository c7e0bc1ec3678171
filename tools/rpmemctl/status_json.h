// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/target.h"
#include "protocol/daemon_event.h"
#include "protocol/reply.h"

namespace rpmem::tools {

// The JSON documents of `rpmemctl status --json` and `rpmemctl events`, one place for their
// field names (the README lists them; they are added to, never renamed). Pure.

// {"target", "daemon": {...}, "sessions": [...]}.
nlohmann::json status_json(const Target& target, const protocol::StatusReply& status);

// One session of the status, also the body of an "exists" event line.
nlohmann::json session_json(const protocol::SessionStatus& session);

// One event line: {"sequence", "time", "kind", "session", "identity", "peer", ...}.
nlohmann::json event_json(const protocol::DaemonEvent& event);

// `document` as one line of text; bytes that are not UTF-8 become U+FFFD, so the output is
// always valid JSON whatever names a client chose.
std::string json_text(const nlohmann::json& document);

} // namespace rpmem::tools
