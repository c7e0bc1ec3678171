// SPDX-License-Identifier: BSD-3-Clause
#include "remote_target.h"

#include <fmt/format.h>

#include "client/control.h"

namespace rpmem::tools {

Result<RemoteTarget> RemoteTarget::from(std::string_view text) {
    auto settings = client::load_settings(client::process_environment());
    if (!settings)
        return fail(std::move(settings.error()));
    auto target = parse_target(text);
    if (!target)
        return fail(std::move(target.error()).add_context(fmt::format("target '{}'", text)));
    return RemoteTarget{std::move(*settings), std::move(*target)};
}

Result<std::unique_ptr<channel::Client>> RemoteTarget::connect() const {
    return client::connect_control(settings, target);
}

protocol::ProviderPreference RemoteTarget::provider() const {
    auto preference = protocol::provider_preference_from_name(settings.provider);
    return preference.value_or(protocol::ProviderPreference::any);
}

protocol::PersistMethod RemoteTarget::persist_method() const {
    return settings.method;
}

std::string uuid_text(const PoolAttributes::Uuid& u) {
    return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                       "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                       u[12], u[13], u[14], u[15]);
}

std::string signature_text(const PoolAttributes& attributes) {
    std::string text;
    for (char c : attributes.signature) {
        if (c == '\0')
            break;
        text += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    return text;
}

} // namespace rpmem::tools
