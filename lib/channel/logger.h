// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <spdlog/logger.h>

namespace rpmem::channel {

// The channel layer's own logger ("rpmem.channel"), writing to stderr at level warn by default.
// It is not registered with spdlog, so the host application's global spdlog settings are
// untouched; an application that wants these lines elsewhere (rpmemd) replaces the logger's
// sinks or level through this reference. Lines name the peer and session id; keys, tokens and
// message contents are never logged. Created on first use; thread-safe.
spdlog::logger& logger();

} // namespace rpmem::channel
