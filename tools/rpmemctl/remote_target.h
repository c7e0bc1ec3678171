// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "base/target.h"
#include "channel/client.h"
#include "client/settings.h"
#include "protocol/preferences.h"

namespace rpmem::tools {

// What the subcommands that talk to a running rpmemd (status, create, remove, info) share: the
// client settings read once from the environment and the client config file, the parsed
// `[user@]host[:port]` target, and connecting to it. A value owned by one subcommand run.
struct RemoteTarget {
    client::Settings settings;
    Target target;

    // Reads the settings (client::load_settings of the process environment) and parses `text`.
    static Result<RemoteTarget> from(std::string_view text);

    // The TLS control channel to the target (the user@ identity check included).
    Result<std::unique_ptr<channel::Client>> connect() const;

    // The settings' provider and persistence method as the protocol's preferences.
    protocol::ProviderPreference provider() const;
    protocol::PersistMethod persist_method() const;
};

// "0123abcd-..." (8-4-4-4-12 lower-case hex).
std::string uuid_text(const PoolAttributes::Uuid& uuid);

// The signature's printable characters up to its first NUL.
std::string signature_text(const PoolAttributes& attributes);

} // namespace rpmem::tools
