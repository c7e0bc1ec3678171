// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/account_ids.h"

#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>

namespace rpmem::daemon {

namespace {

template <typename Id>
std::optional<Id> parse_id(std::string_view text) {
    Id id{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return id;
}

} // namespace

Result<uid_t> resolve_user(std::string_view name) {
    if (auto id = parse_id<uid_t>(name))
        return *id;
    const std::string key(name);
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    int error = ::getpwnam_r(key.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (error != 0)
        return fail(Error::from_errno(error, fmt::format("looking up user '{}'", key)));
    if (found == nullptr)
        return fail(ENOENT, fmt::format("no user '{}'", key));
    return found->pw_uid;
}

Result<gid_t> resolve_group(std::string_view name) {
    if (auto id = parse_id<gid_t>(name))
        return *id;
    const std::string key(name);
    std::vector<char> buffer(16384);
    group entry{};
    group* found = nullptr;
    int error = ::getgrnam_r(key.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (error != 0)
        return fail(Error::from_errno(error, fmt::format("looking up group '{}'", key)));
    if (found == nullptr)
        return fail(ENOENT, fmt::format("no group '{}'", key));
    return found->gr_gid;
}

} // namespace rpmem::daemon
