// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <string_view>

namespace rpmem::daemon {

// The sd_notify(3) protocol without libsystemd: one datagram with `state` ("READY=1",
// "STOPPING=1") to the AF_UNIX socket systemd names in $NOTIFY_SOCKET (a path, or an abstract
// name starting with '@'), which main() reads once and passes here. Does nothing when
// `socket_path` is empty (not started by systemd with Type=notify); failures are returned as
// false for the caller to log, never fatal.
bool notify_systemd(const std::string& socket_path, std::string_view state) noexcept;

} // namespace rpmem::daemon
