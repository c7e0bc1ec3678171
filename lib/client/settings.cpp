// SPDX-License-Identifier: BSD-3-Clause
#include "client/settings.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace rpmem::client {

namespace {

std::string_view trim(std::string_view text) {
    const char* const kSpace = " \t\r\n\v\f";
    auto first = text.find_first_not_of(kSpace);
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

Result<unsigned long> parse_number(std::string_view value, unsigned long min, unsigned long max) {
    unsigned long number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || number < min || number > max)
        return fail(EINVAL, fmt::format("expected a whole number from {} to {}, got '{}'", min, max,
                                        value));
    return number;
}

Result<bool> parse_switch(std::string_view value) {
    if (value == "1" || value == "yes")
        return true;
    if (value == "0" || value == "no")
        return false;
    return fail(EINVAL, fmt::format("expected 1 or 0, got '{}'", value));
}

using SettingSetter = Result<void> (*)(std::string_view value, Settings& settings);

template <typename Rep, typename Period>
Result<void> set_duration(std::string_view value, std::chrono::duration<Rep, Period>& into,
                          unsigned long max) {
    auto number = parse_number(value, 1, max);
    if (!number)
        return fail(std::move(number.error()));
    into = std::chrono::duration<Rep, Period>(*number);
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
         [](std::string_view v, Settings& s) -> Result<void> {
             auto on = parse_switch(v);
             if (!on)
                 return fail(std::move(on.error()));
             s.enable_sockets = *on;
             return {};
         }},
        {"enable-verbs",
         [](std::string_view v, Settings& s) -> Result<void> {
             auto on = parse_switch(v);
             if (!on)
                 return fail(std::move(on.error()));
             s.enable_verbs = *on;
             return {};
         }},
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
             s.max_lanes = static_cast<unsigned>(*number);
             return {};
         }},
        {"work-queue-size",
         [](std::string_view v, Settings& s) -> Result<void> {
             auto number = parse_number(v, 2, 65535);
             if (!number)
                 return fail(std::move(number.error()));
             s.work_queue_size = static_cast<unsigned>(*number);
             return {};
         }},
        {"connect-timeout",
         [](std::string_view v, Settings& s) {
             return set_duration(v, s.connect_timeout, 3600000);
         }},
        {"timeout",
         [](std::string_view v, Settings& s) { return set_duration(v, s.timeout, 3600000); }},
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
             s.min_in_sync_replicas = static_cast<unsigned>(*number);
             return {};
         }},
        {"spin-us",
         [](std::string_view v, Settings& s) { return set_duration(v, s.spin, 1000000); }},
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
    std::ifstream in(path);
    if (!in)
        return fail(Error::from_errno(errno, fmt::format("reading client config {}", path)));
    std::string line;
    unsigned number = 0;
    while (std::getline(in, line)) {
        ++number;
        std::string_view text = line;
        if (auto hash = text.find('#'); hash != std::string_view::npos)
            text = text.substr(0, hash);
        text = trim(text);
        if (text.empty())
            continue;
        auto equals = text.find('=');
        if (equals == std::string_view::npos)
            return fail(EINVAL,
                        fmt::format("{}:{}: expected 'key = value', got '{}'", path, number, text));
        auto key = trim(text.substr(0, equals));
        auto setter = setters().find(key);
        if (setter == setters().end())
            return fail(EINVAL, fmt::format("{}:{}: unknown key '{}'", path, number, key));
        if (auto applied = setter->second(trim(text.substr(equals + 1)), settings); !applied)
            return fail(EINVAL,
                        fmt::format("{}:{}: {}: {}", path, number, key, applied.error().message()));
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
    return settings;
}

} // namespace rpmem::client
