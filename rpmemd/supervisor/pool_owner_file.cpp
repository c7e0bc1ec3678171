// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/pool_owner_file.h"

#include <charconv>

#include <fmt/format.h>

#include "base/config_text.h"
#include "base/log_text.h"
#include "rpmemd/supervisor/small_file.h"

namespace rpmem::daemon {

namespace {

constexpr std::string_view kSuffix = ".rpmem-owner";
constexpr std::size_t kMaxOwnerFileSize = 4096;

} // namespace

std::string format_pool_owner(std::string_view identity) {
    std::string hex;
    for (char c : identity)
        hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
    // The comment is for the operator who reads it; rpmemd reads the hex only.
    return fmt::format("# rpmemd: the client identity that owns the pool set beside this file "
                       "('{}'); rpmemd writes it, do not edit\nowner = {}\n",
                       escape_for_log(identity, 128), hex);
}

Result<std::string> parse_pool_owner(std::string_view text, std::string_view origin) {
    auto entries = parse_config_text(text, origin);
    if (!entries)
        return fail(std::move(entries.error()));
    std::optional<std::string> owner;
    for (const ConfigEntry& entry : *entries) {
        auto bad = [&](std::string_view what) {
            return fail(EINVAL, fmt::format("{}:{}: {}", origin, entry.line, what));
        };
        const std::string_view key = entry.key;
        const std::string_view value = entry.value;
        if (key != "owner")
            return bad(fmt::format("unknown key '{}'", escape_for_log(key)));
        if (owner)
            return bad("a second owner");
        if (value.empty() || value.size() % 2 != 0)
            return bad("the owner is an identity in hex, two digits a byte");
        std::string identity;
        for (std::size_t i = 0; i < value.size(); i += 2) {
            unsigned char byte = 0;
            auto [rest, error] = std::from_chars(value.data() + i, value.data() + i + 2, byte, 16);
            if (error != std::errc{} || rest != value.data() + i + 2)
                return bad(fmt::format("bad hex '{}'", escape_for_log(value.substr(i, 2))));
            identity += static_cast<char>(byte);
        }
        owner = std::move(identity);
    }
    if (!owner)
        return fail(EINVAL, fmt::format("{}: names no owner", origin));
    return *owner;
}

PoolOwnerFile::PoolOwnerFile(UniqueFd directory, std::string_view set_leaf,
                             std::string_view set_path)
    : file_(std::move(directory), set_leaf, set_path, kSuffix) {}

Result<std::optional<std::string>> PoolOwnerFile::read() const {
    auto text = file_.read(kMaxOwnerFileSize);
    if (!text)
        return fail(std::move(text.error()));
    if (!*text)
        return std::optional<std::string>{};
    auto owner = parse_pool_owner(**text, file_.path());
    if (!owner)
        return fail(std::move(owner.error()));
    return std::optional<std::string>(std::move(*owner));
}

Result<void> PoolOwnerFile::write(std::string_view identity) const {
    return file_.replace(format_pool_owner(identity), "owner record");
}

Result<void> PoolOwnerFile::remove() const {
    return file_.remove();
}

} // namespace rpmem::daemon
