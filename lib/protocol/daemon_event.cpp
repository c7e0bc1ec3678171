// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/daemon_event.h"

namespace rpmem::protocol {

std::optional<EventKind> event_kind_from_wire(std::uint16_t value) noexcept {
    if (value >= static_cast<std::uint16_t>(EventKind::session_opened) &&
        value <= static_cast<std::uint16_t>(EventKind::refused))
        return static_cast<EventKind>(value);
    return std::nullopt;
}

std::string_view name_of(EventKind kind) noexcept {
    switch (kind) {
    case EventKind::session_opened:
        return "session_opened";
    case EventKind::session_closed:
        return "session_closed";
    case EventKind::session_lost:
        return "session_lost";
    case EventKind::state_changed:
        return "state_changed";
    case EventKind::resync_started:
        return "resync_started";
    case EventKind::resync_progress:
        return "resync_progress";
    case EventKind::resync_finished:
        return "resync_finished";
    case EventKind::refused:
        return "refused";
    }
    return "unknown";
}

} // namespace rpmem::protocol
