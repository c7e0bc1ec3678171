// SPDX-License-Identifier: BSD-3-Clause
#include "client/settings.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "base/config_text.h"
#include "poolset/parser.h"

namespace rpmem::client {

namespace {

Result<unsigned> parse_number(std::string_view value, unsigned min, unsigned max) {
    auto number = parse_config_number(value, min, max);
    if (!number)
        return fail(std::move(number.error()));
    return static_cast<unsigned>(*number);
}

Result<void> set_switch(std::string_view value, bool& into) {
    auto on = parse_config_switch(value);
    if (!on)
        return fail(std::move(on.error()));
    into = *on;
    return {};
}

using SettingSetter = Result<void> (*)(std::string_view value, Settings& settings);

// A duration; a bare number is in `Unit` (PMDK's RPMEM_TIMEOUT is milliseconds). At least one
// `Unit` unless `min` says otherwise (a spin of 0 means: never busy-poll).
template <typename Unit>
Result<void> set_duration(std::string_view value, Unit& into, std::chrono::microseconds max,
                          std::chrono::microseconds min = Unit(1)) {
    auto duration = parse_config_duration(value, Unit(1), min, max);
    if (!duration)
        return fail(std::move(duration.error()));
    into = std::chrono::duration_cast<Unit>(*duration);
    return {};
}

// Keys of the config file; the environment variable is RPMEM_ + the key in upper case with
// '_' for '-'.
const std::map<std::string_view, SettingSetter>& setters() {
    static const std::map<std::string_view, SettingSetter> table = {
        {"tls-ca",
         [](std::string_view v, Settings& s) -> Result<void> {
             s.tls_ca = v;
             return {};
         }},
        {"tls-cert",
         [](std::string_view v, Settings& s) -> Result<void> {
             s.tls_cert = v;
             return {};
         }},
        {"tls-key",
         [](std::string_view v, Settings& s) -> Result<void> {
             s.tls_key = v;
             return {};
         }},
        {"provider",
         [](std::string_view v, Settings& s) -> Result<void> {
             if (v != "tcp" && v != "sockets" && v != "verbs" && !v.empty())
                 return fail(EINVAL, fmt::format("expected tcp, sockets or verbs, got '{}'", v));
             s.provider = v;
             return {};
         }},
        {"enable-sockets",
         [](std::string_view v, Settings& s) { return set_switch(v, s.enable_sockets); }},
        {"enable-verbs",
         [](std::string_view v, Settings& s) { return set_switch(v, s.enable_verbs); }},
        {"persist-method",
         [](std::string_view v, Settings& s) -> Result<void> {
             auto method = protocol::persist_method_from_name(v);
             if (!method)
                 return fail(EINVAL,
                             fmt::format("expected apm, gpspm, commit or any, got '{}'", v));
             s.method = *method;
             return {};
         }},
        {"max-nlanes",
         [](std::string_view v, Settings& s) -> Result<void> {
             auto number = parse_number(v, 1, 65535);
             if (!number)
                 return fail(std::move(number.error()));
             s.max_lanes = *number;
             return {};
         }},
        {"work-queue-size",
         [](std::string_view v, Settings& s) -> Result<void> {
             auto number = parse_number(v, 2, 65535);
             if (!number)
                 return fail(std::move(number.error()));
             s.work_queue_size = *number;
             return {};
         }},
        {"connect-timeout",
         [](std::string_view v, Settings& s) {
             return set_duration(v, s.connect_timeout, std::chrono::hours(1));
         }},
        {"timeout", [](std::string_view v,
                       Settings& s) { return set_duration(v, s.timeout, std::chrono::hours(1)); }},
        {"on-replica-failure",
         [](std::string_view v, Settings& s) -> Result<void> {
             if (v == "error")
                 s.on_replica_failure = FailurePolicy::error;
             else if (v == "abort")
                 s.on_replica_failure = FailurePolicy::abort;
             else if (v == "continue")
                 s.on_replica_failure = FailurePolicy::continue_degraded;
             else
                 return fail(EINVAL, fmt::format("expected error, abort or continue, got '{}'", v));
             return {};
         }},
        {"min-in-sync-replicas",
         [](std::string_view v, Settings& s) -> Result<void> {
             if (v == "all") {
                 s.min_in_sync_replicas = 0;
                 return {};
             }
             auto number = parse_number(v, 1, 4096);
             if (!number)
                 return fail(EINVAL, fmt::format("expected all or a whole number from 1 to "
                                                 "4096, got '{}'",
                                                 v));
             s.min_in_sync_replicas = *number;
             return {};
         }},
        {"fan-out", [](std::string_view v, Settings& s) { return set_switch(v, s.fan_out); }},
        {"replication",
         [](std::string_view v, Settings& s) -> Result<void> {
             if (v == "sync")
                 s.replication = Replication::sync;
             else if (v == "async")
                 s.replication = Replication::async;
             else
                 return fail(EINVAL, fmt::format("expected sync or async, got '{}'", v));
             return {};
         }},
        {"max-lag",
         [](std::string_view v, Settings& s) -> Result<void> {
             auto size = poolset::parse_size(v);
             // At least one message's worth; at most what a client would hold in memory.
             constexpr std::uint64_t kMin = 64 * 1024, kMax = 1ULL << 30;
             if (!size || *size < kMin || *size > kMax)
                 return fail(EINVAL, fmt::format("expected a size from 64K to 1G (e.g. 8M), got "
                                                 "'{}'",
                                                 v));
             s.max_lag = *size;
             return {};
         }},
        {"max-lag-time",
         [](std::string_view v, Settings& s) {
             return set_duration(v, s.max_lag_time, std::chrono::hours(1));
         }},
        {"spin-us",
         [](std::string_view v, Settings& s) {
             return set_duration(v, s.spin, std::chrono::seconds(1), std::chrono::microseconds(0));
         }},
        {"log-level",
         [](std::string_view v, Settings& s) -> Result<void> {
             static const std::vector<std::string_view> kLevels = {"off",  "error", "warn",
                                                                   "info", "debug", "trace"};
             if (std::find(kLevels.begin(), kLevels.end(), v) == kLevels.end())
                 return fail(
                     EINVAL,
                     fmt::format("expected off, error, warn, info, debug or trace, got '{}'", v));
             s.log_level = std::string(v);
             return {};
         }},
        {"log-file",
         [](std::string_view v, Settings& s) -> Result<void> {
             s.log_file = v;
             return {};
         }},
        {"usage-file",
         [](std::string_view v, Settings& s) -> Result<void> {
             s.usage_file = v;
             return {};
         }},
    };
    return table;
}

std::string variable_of(std::string_view key) {
    std::string name = "RPMEM_";
    for (char c : key)
        name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return name;
}

Result<void> apply_file(const std::string& path, Settings& settings) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return fail(Error::from_errno(errno, fmt::format("reading client config {}", path)));
    std::ostringstream text;
    text << in.rdbuf();
    auto entries = parse_config_text(text.str(), path);
    if (!entries)
        return fail(std::move(entries.error()));
    for (const ConfigEntry& entry : *entries) {
        auto setter = setters().find(entry.key);
        if (setter == setters().end())
            return fail(EINVAL,
                        fmt::format("{}:{}: unknown key '{}'", path, entry.line, entry.key));
        if (auto applied = setter->second(entry.value, settings); !applied)
            return fail(EINVAL, fmt::format("{}:{}: {}: {}", path, entry.line, entry.key,
                                            applied.error().message()));
    }
    return {};
}

} // namespace

Environment process_environment() {
    return [](std::string_view name) -> std::optional<std::string> {
        // secure_getenv: a set-user-ID program linking librpmem never takes its
        // configuration (certificates, log file) from the caller's environment.
        const char* value = ::secure_getenv(std::string(name).c_str());
        if (value == nullptr)
            return std::nullopt;
        return std::string(value);
    };
}

Result<Settings> load_settings(const Environment& environment) {
    Settings settings;

    std::vector<std::string> candidates;
    if (auto explicit_file = environment("RPMEM_CONFIG")) {
        candidates.push_back(*explicit_file);
    } else {
        if (auto home = environment("HOME"); home && !home->empty())
            candidates.push_back(*home + "/.config/rpmem/client.conf");
        candidates.emplace_back("/etc/rpmem/client.conf");
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        std::error_code ignored;
        bool is_explicit = environment("RPMEM_CONFIG").has_value();
        if (!is_explicit && !std::filesystem::exists(candidates[i], ignored))
            continue;
        if (auto applied = apply_file(candidates[i], settings); !applied)
            return fail(std::move(applied.error()));
        break; // the first file found is the only one read
    }

    for (const auto& [key, setter] : setters()) {
        std::string variable = variable_of(key);
        auto value = environment(variable);
        if (!value)
            continue;
        if (auto applied = setter(*value, settings); !applied)
            return fail(EINVAL, fmt::format("environment variable {}: {}", variable,
                                            applied.error().message()));
    }
    // PMDK's switches, applied as PMDK did: a provider they turn off is never used.
    if (settings.provider == "sockets" && !settings.enable_sockets)
        return fail(EINVAL, "RPMEM_PROVIDER=sockets: the sockets provider is off; set "
                            "RPMEM_ENABLE_SOCKETS=1 (or enable-sockets = yes) to use it");
    if (settings.provider == "verbs" && !settings.enable_verbs)
        return fail(EINVAL, "RPMEM_PROVIDER=verbs: the verbs provider is off "
                            "(RPMEM_ENABLE_VERBS=0)");
    return settings;
}

} // namespace rpmem::client
