// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/config.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <fmt/format.h>

#include "base/target.h"

namespace rpmem::daemon {

namespace {

std::string_view trim(std::string_view text) {
    const char* const kSpace = " \t\r\n\v\f";
    auto first = text.find_first_not_of(kSpace);
    if (first == std::string_view::npos)
        return {};
    auto last = text.find_last_not_of(kSpace);
    return text.substr(first, last - first + 1);
}

// Splits "a, b c" into {"a", "b", "c"}.
std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> items;
    std::string item;
    for (char c : text) {
        if (c == ',' || c == ' ' || c == '\t') {
            if (!item.empty())
                items.push_back(std::move(item));
            item.clear();
        } else {
            item += c;
        }
    }
    if (!item.empty())
        items.push_back(std::move(item));
    return items;
}

Result<bool> parse_yes_no(std::string_view value) {
    if (value == "yes")
        return true;
    if (value == "no")
        return false;
    return fail(EINVAL, fmt::format("expected 'yes' or 'no', got '{}'", value));
}

Result<unsigned> parse_unsigned(std::string_view value, unsigned min, unsigned max) {
    unsigned number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || number < min || number > max)
        return fail(EINVAL, fmt::format("expected a whole number from {} to {}, got '{}'", min, max,
                                        value));
    return number;
}

// "250ms", "2s", "1m"; a bare number is milliseconds.
Result<std::chrono::milliseconds> parse_duration(std::string_view value) {
    std::size_t digits = 0;
    while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9')
        ++digits;
    std::string_view unit = value.substr(digits);
    long long scale = 0;
    if (unit.empty() || unit == "ms")
        scale = 1;
    else if (unit == "s")
        scale = 1000;
    else if (unit == "m")
        scale = 60000;
    unsigned long long number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + digits, number);
    if (digits == 0 || scale == 0 || ec != std::errc() || end != value.data() + digits ||
        number == 0 || number > 3600000ULL / static_cast<unsigned long long>(scale))
        return fail(EINVAL, fmt::format("expected a duration such as '500ms', '2s' or '1m' "
                                        "(at most one hour), got '{}'",
                                        value));
    return std::chrono::milliseconds(static_cast<long long>(number) * scale);
}

Result<LogLevel> parse_log_level(std::string_view value) {
    for (LogLevel level :
         {LogLevel::err, LogLevel::warn, LogLevel::notice, LogLevel::info, LogLevel::debug})
        if (value == to_string(level))
            return level;
    return fail(EINVAL,
                fmt::format("expected one of err, warn, notice, info, debug, got '{}'", value));
}

Result<std::string> parse_path(std::string_view value) {
    if (value.empty())
        return fail(EINVAL, "expected a path");
    return std::string(value);
}

using ConfigSetter = std::function<Result<void>(std::string_view value, Config& config)>;

template <typename T, typename Parse>
ConfigSetter set_field(T Config::*field, Parse parse) {
    return [field, parse](std::string_view value, Config& config) -> Result<void> {
        auto parsed = parse(value);
        if (!parsed)
            return fail(std::move(parsed.error()));
        config.*field = std::move(*parsed);
        return {};
    };
}

template <typename Parse>
ConfigSetter set_method(bool persist::MethodPolicy::*field, Parse parse) {
    return [field, parse](std::string_view value, Config& config) -> Result<void> {
        auto parsed = parse(value);
        if (!parsed)
            return fail(std::move(parsed.error()));
        // The first persist-* key turns the defaults off: the operator lists what is allowed.
        if (!config.methods.keys_named)
            config.methods = persist::MethodPolicy{false, false, false, true};
        config.methods.*field = *parsed;
        return {};
    };
}

Result<void> set_listen(std::string_view value, Config& config) {
    // Port 0 (any free port, read back from port-file) is not a target port: take it off first.
    // (Unbracketed text with several ':' is an IPv6 address without a port.)
    bool any_port =
        value.ends_with("]:0") || (value.ends_with(":0") && value.find(':') == value.size() - 2);
    auto target = parse_target(any_port ? value.substr(0, value.size() - 2) : value);
    if (!target)
        return fail(std::move(target.error()));
    if (!target->user.empty())
        return fail(EINVAL, fmt::format("expected HOST[:PORT] without a user, got '{}'", value));
    config.listen_host = target->host;
    if (any_port && target->port)
        return fail(EINVAL, fmt::format("expected HOST[:PORT], got '{}'", value));
    config.listen_port = any_port ? 0 : target->port.value_or(kDefaultPort);
    return {};
}

Result<void> set_client_poolset_dir(std::string_view value, Config& config) {
    auto items = split_list(value);
    if (items.size() != 2)
        return fail(EINVAL, fmt::format("expected 'IDENTITY DIRECTORY', got '{}'", value));
    config.client_poolset_dirs[items[0]] = items[1];
    return {};
}

Result<void> append_list(std::vector<std::string> Config::*field, std::string_view value,
                         Config& config) {
    auto items = split_list(value);
    if (items.empty())
        return fail(EINVAL, "expected one or more names");
    for (auto& item : items)
        (config.*field).push_back(std::move(item));
    return {};
}

Result<void> set_domain(std::string_view value, Config& config) {
    if (value == "adr")
        config.platform.domain = persist::PersistenceDomain::adr;
    else if (value == "eadr")
        config.platform.domain = persist::PersistenceDomain::eadr;
    else
        return fail(EINVAL, fmt::format("expected 'adr' or 'eadr', got '{}'", value));
    return {};
}

// Every key a config file (or a long command-line option) may set.
const std::map<std::string, ConfigSetter, std::less<>>& setters() {
    static const std::map<std::string, ConfigSetter, std::less<>> table = {
        {"poolset-dir", set_field(&Config::poolset_dir, parse_path)},
        {"client-poolset-dir", set_client_poolset_dir},
        {"persist-apm", set_method(&persist::MethodPolicy::allow_apm, parse_yes_no)},
        {"persist-general", set_method(&persist::MethodPolicy::allow_gpspm, parse_yes_no)},
        {"persist-commit", set_method(&persist::MethodPolicy::allow_commit, parse_yes_no)},
        {"persistence-domain", set_domain},
        {"nic-writes-bypass-cache",
         [](std::string_view value, Config& config) -> Result<void> {
             auto parsed = parse_yes_no(value);
             if (!parsed)
                 return fail(std::move(parsed.error()));
             config.platform.nic_writes_bypass_cache = *parsed;
             return {};
         }},
        {"platform-type",
         [](std::string_view value, Config& config) -> Result<void> {
             config.platform.type = std::string(value);
             return {};
         }},
        {"use-syslog", set_field(&Config::use_syslog, parse_yes_no)},
        {"log-file", set_field(&Config::log_file, parse_path)},
        {"log-level", set_field(&Config::log_level, parse_log_level)},
        {"listen", set_listen},
        {"tls-ca", set_field(&Config::tls_ca, parse_path)},
        {"tls-cert", set_field(&Config::tls_cert, parse_path)},
        {"tls-key", set_field(&Config::tls_key, parse_path)},
        {"allow-client",
         [](std::string_view value, Config& config) {
             return append_list(&Config::allowed_clients, value, config);
         }},
        {"allow-provider",
         [](std::string_view value, Config& config) {
             return append_list(&Config::allowed_providers, value, config);
         }},
        {"fabric-address", set_field(&Config::fabric_host, parse_path)},
        {"max-lanes",
         set_field(&Config::max_lanes, [](auto v) { return parse_unsigned(v, 1, 1024); })},
        {"max-sessions",
         set_field(&Config::max_sessions, [](auto v) { return parse_unsigned(v, 1, 4096); })},
        {"max-sessions-per-client", set_field(&Config::max_sessions_per_client,
                                              [](auto v) { return parse_unsigned(v, 1, 4096); })},
        {"max-pending-connections", set_field(&Config::max_pending_connections,
                                              [](auto v) { return parse_unsigned(v, 1, 65536); })},
        {"max-pending-per-source", set_field(&Config::max_pending_per_source,
                                             [](auto v) { return parse_unsigned(v, 1, 65536); })},
        {"nthreads",
         set_field(&Config::nthreads, [](auto v) { return parse_unsigned(v, 0, 256); })},
        {"heartbeat", set_field(&Config::heartbeat, parse_duration)},
        {"session-timeout", set_field(&Config::session_timeout, parse_duration)},
        {"port-file", set_field(&Config::port_file, parse_path)},
        {"user", set_field(&Config::worker_user, parse_path)},
        {"group", set_field(&Config::worker_group, parse_path)},
        {"worker-sandbox", set_field(&Config::worker_sandbox, parse_yes_no)},
    };
    return table;
}

// Options that PMDK's rpmemd took as flags without a value.
bool is_flag(std::string_view key) {
    return key == "persist-apm" || key == "persist-general" || key == "persist-commit" ||
           key == "use-syslog" || key == "nic-writes-bypass-cache";
}

Result<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return fail(Error::from_errno(errno, fmt::format("reading config file {}", path)));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Replaces "$HOME" where it is a whole path component (PMDK's rule) with `home`.
void expand_home(std::string& path, const std::string& home) {
    static constexpr std::string_view kHome = "$HOME";
    std::string expanded;
    std::size_t i = 0;
    while (i < path.size()) {
        bool component_start = i == 0 || path[i - 1] == '/';
        bool matches = path.compare(i, kHome.size(), kHome) == 0;
        std::size_t end = i + kHome.size();
        if (component_start && matches && (end == path.size() || path[end] == '/')) {
            expanded += home;
            i += kHome.size();
        } else {
            expanded += path[i++];
        }
    }
    path = std::move(expanded);
}

Result<void> validate(Config& config, CommandLine::Mode mode, const ConfigSources& sources) {
    expand_home(config.poolset_dir, sources.home);
    for (auto& [identity, dir] : config.client_poolset_dirs)
        expand_home(dir, sources.home);
    if (config.poolset_dir.empty() || config.poolset_dir.front() != '/')
        return fail(EINVAL, fmt::format("poolset-dir must be an absolute path, got '{}'",
                                        config.poolset_dir));
    for (const auto& [identity, dir] : config.client_poolset_dirs)
        if (dir.empty() || dir.front() != '/')
            return fail(EINVAL,
                        fmt::format("client-poolset-dir of '{}' must be an absolute path, got '{}'",
                                    identity, dir));
    if (config.max_pending_per_source > config.max_pending_connections)
        return fail(EINVAL,
                    fmt::format("max-pending-per-source ({}) may not exceed "
                                "max-pending-connections ({})",
                                config.max_pending_per_source, config.max_pending_connections));
    if (config.max_sessions_per_client > config.max_sessions)
        return fail(EINVAL, fmt::format("max-sessions-per-client ({}) may not exceed "
                                        "max-sessions ({})",
                                        config.max_sessions_per_client, config.max_sessions));
    if (config.methods.keys_named && !config.methods.allow_apm && !config.methods.allow_gpspm &&
        !config.methods.allow_commit)
        return fail(EINVAL, "the configuration names persist-* keys but sets none of them to yes: "
                            "no persistence method is allowed (persist-general = yes allows "
                            "gpspm, which is valid everywhere)");
    if (mode == CommandLine::Mode::serve) {
        for (auto [key, value] :
             {std::pair{"tls-ca", &config.tls_ca}, std::pair{"tls-cert", &config.tls_cert},
              std::pair{"tls-key", &config.tls_key}})
            if (value->empty())
                return fail(EINVAL, fmt::format("{} is not set: rpmemd serves only over mutual TLS "
                                                "(rpmemctl init DIR makes the certificates)",
                                                key));
    }
    return {};
}

} // namespace

unsigned effective_max_sessions_per_client(const Config& config) noexcept {
    if (config.max_sessions_per_client != 0)
        return config.max_sessions_per_client;
    return std::max(1U, config.max_sessions / 4);
}

std::string_view to_string(LogLevel level) noexcept {
    switch (level) {
    case LogLevel::err:
        return "err";
    case LogLevel::warn:
        return "warn";
    case LogLevel::notice:
        return "notice";
    case LogLevel::info:
        return "info";
    case LogLevel::debug:
        return "debug";
    }
    return "err";
}

Result<void> apply_config_text(std::string_view text, std::string_view origin, Config& config) {
    unsigned line_number = 0;
    while (!text.empty()) {
        ++line_number;
        auto newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);

        if (auto comment = line.find('#'); comment != std::string_view::npos)
            line = line.substr(0, comment);
        line = trim(line);
        if (line.empty())
            continue;

        auto where = [&] { return fmt::format("{}:{}", origin, line_number); };
        auto equals = line.find('=');
        if (equals == std::string_view::npos)
            return fail(EINVAL, fmt::format("{}: expected 'key = value', got '{}'", where(), line));
        std::string_view key = trim(line.substr(0, equals));
        std::string_view value = trim(line.substr(equals + 1));

        auto setter = setters().find(key);
        if (setter == setters().end())
            return fail(EINVAL, fmt::format("{}: unknown key '{}'", where(), key));
        if (auto applied = setter->second(value, config); !applied)
            return fail(EINVAL, fmt::format("{}: {}: {}", where(), key, applied.error().message()));
    }
    return {};
}

Result<CommandLine> parse_command_line(int argc, const char* const* argv) {
    CommandLine command_line;
    std::vector<std::string_view> args(argv + std::min(argc, 1), argv + argc);

    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        std::string key;
        std::optional<std::string_view> value;

        if (arg.starts_with("--")) {
            std::string_view body = arg.substr(2);
            auto equals = body.find('=');
            key = std::string(body.substr(0, equals));
            if (equals != std::string_view::npos)
                value = body.substr(equals + 1);
        } else if (arg.size() == 2 && arg[0] == '-') {
            static const std::map<char, std::string> kShort = {
                {'c', "config"},   {'r', "remove"}, {'f', "force"},   {'s', "pool-set"},
                {'t', "nthreads"}, {'h', "help"},   {'V', "version"},
            };
            auto found = kShort.find(arg[1]);
            if (found == kShort.end())
                return fail(EINVAL, fmt::format("unknown option '{}' (see rpmemd --help)", arg));
            key = found->second;
        } else {
            return fail(EINVAL, fmt::format("unexpected argument '{}' (see rpmemd --help)", arg));
        }

        auto take_value = [&]() -> Result<std::string> {
            if (value)
                return std::string(*value);
            if (i + 1 >= args.size())
                return fail(EINVAL, fmt::format("option '{}' needs a value", arg));
            return std::string(args[++i]);
        };
        auto no_value = [&]() -> Result<void> {
            if (value)
                return fail(EINVAL, fmt::format("option '--{}' takes no value", key));
            return {};
        };

        if (key == "help" || key == "version") {
            if (auto ok = no_value(); !ok)
                return fail(std::move(ok.error()));
            command_line.mode =
                key == "help" ? CommandLine::Mode::help : CommandLine::Mode::version;
            return command_line;
        } else if (key == "config") {
            auto path = take_value();
            if (!path)
                return fail(std::move(path.error()));
            command_line.config_file = *path;
        } else if (key == "remove") {
            auto set = take_value();
            if (!set)
                return fail(std::move(set.error()));
            command_line.mode = CommandLine::Mode::remove;
            command_line.remove_set = *set;
        } else if (key == "force" || key == "pool-set") {
            if (auto ok = no_value(); !ok)
                return fail(std::move(ok.error()));
            (key == "force" ? command_line.force : command_line.remove_pool_set) = true;
        } else if (setters().contains(key)) {
            std::string setting;
            if (is_flag(key) && !value) {
                setting = "yes";
            } else {
                auto taken = take_value();
                if (!taken)
                    return fail(std::move(taken.error()));
                setting = *taken;
            }
            if (setting.find_first_of("#\n") != std::string::npos)
                return fail(EINVAL, fmt::format("option '--{}': value may not contain '#' or a "
                                                "line break",
                                                key));
            command_line.overrides += key + " = " + setting + "\n";
        } else {
            return fail(EINVAL, fmt::format("unknown option '--{}' (see rpmemd --help)", key));
        }
    }

    if ((command_line.force || command_line.remove_pool_set) &&
        command_line.mode != CommandLine::Mode::remove)
        return fail(EINVAL, "--force and --pool-set go with --remove SET");
    return command_line;
}

Result<Config> load_config(const CommandLine& command_line, const ConfigSources& sources) {
    Config config;
    auto apply_file = [&](const std::string& path, bool must_exist) -> Result<void> {
        std::error_code ignored;
        if (!must_exist && !std::filesystem::exists(path, ignored))
            return {};
        auto text = read_file(path);
        if (!text)
            return fail(std::move(text.error()));
        return apply_config_text(*text, path, config);
    };

    if (command_line.config_file) {
        if (auto applied = apply_file(*command_line.config_file, true); !applied)
            return fail(std::move(applied.error()));
    } else {
        for (const std::string& path : {sources.system_file, sources.user_file}) {
            if (path.empty())
                continue;
            if (auto applied = apply_file(path, false); !applied)
                return fail(std::move(applied.error()));
        }
    }
    if (auto applied = apply_config_text(command_line.overrides, "command line", config); !applied)
        return fail(std::move(applied.error()));
    if (auto valid = validate(config, command_line.mode, sources); !valid)
        return fail(std::move(valid.error()));
    return config;
}

std::string usage_text() {
    return R"(Usage: rpmemd [OPTIONS]
       rpmemd --remove SET [--force] [--pool-set] [OPTIONS]

The rpmem target daemon: serves remote replicas of persistent-memory pools to librpmem clients
over mutual TLS (control) and libfabric (data). Runs in the foreground.

  -c, --config FILE        read only FILE (default: /etc/rpmemd/rpmemd.conf, then ~/.rpmemd.conf)
  -r, --remove SET         remove the pool described by SET (relative to poolset-dir) and exit
  -f, --force              with --remove: ignore errors while removing parts
  -s, --pool-set           with --remove: also remove the pool set file
  -t, --nthreads N         accepted for PMDK compatibility; not used yet
  -h, --help               this text
  -V, --version            the version

Every config file key is also an option (--KEY VALUE or --KEY=VALUE) and wins over files:
  poolset-dir, client-poolset-dir, persist-apm, persist-general, persist-commit,
  persistence-domain (adr|eadr), nic-writes-bypass-cache, platform-type, use-syslog, log-file,
  log-level (err|warn|notice|info|debug), listen (HOST[:PORT], default port 7636), tls-ca,
  tls-cert, tls-key, allow-client, allow-provider, fabric-address, max-lanes, max-sessions,
  nthreads, heartbeat (a silent client is dropped after it), session-timeout (TLS and Hello
  must finish within it), port-file (written with the bound port once listening), user and
  group (the data-path workers' ids when started as root; default nobody/nogroup),
  worker-sandbox (yes|no, default yes).

Each client identity's data path (fabric endpoints, registered pool memory) runs in a
sandboxed worker process of its own; the supervisor keeps TLS, authorization, pool locks and
logging.

Admission limits (keys and options as above):
  max-sessions N              concurrent sessions (default 64)
  max-sessions-per-client N   concurrent sessions of one client identity (default: a quarter
                              of max-sessions, at least 1); more are refused as busy
  max-pending-connections N   connections not yet through TLS and Hello (default 128); at the
                              limit a newcomer from an address holding fewer than the busiest
                              one replaces that one's oldest, others are closed at once
  max-pending-per-source N    of those, from one IP address (default 16); more are closed at
                              once, before TLS
rpmemd needs about 64 + max-pending-connections + 10 x max-sessions file descriptors; it raises
its soft RLIMIT_NOFILE up to the hard limit as needed and warns when that is not enough
(systemd: LimitNOFILE=).
)";
}

} // namespace rpmem::daemon
