// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/config.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/config_text.h"
#include "base/target.h"

namespace rpmem::daemon {

namespace {

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

Result<unsigned> parse_unsigned(std::string_view value, unsigned min, unsigned max) {
    auto number = parse_config_number(value, min, max);
    if (!number)
        return fail(std::move(number.error()));
    return static_cast<unsigned>(*number);
}

// "250ms", "2s", "1m"; a bare number is milliseconds.
Result<std::chrono::milliseconds> parse_duration(std::string_view value) {
    auto duration = parse_config_duration(value, std::chrono::milliseconds(1),
                                          std::chrono::milliseconds(1), std::chrono::hours(1));
    if (!duration)
        return fail(std::move(duration.error()));
    return std::chrono::duration_cast<std::chrono::milliseconds>(*duration);
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

struct ListenAddress {
    std::string host;
    std::uint16_t port = 0; // 0: any free port
};

// `HOST[:PORT]`; `HOST:0` asks for any free port (read back from a port file); without a port,
// `default_port`, or an error when there is none.
Result<ListenAddress> parse_listen_address(std::string_view value,
                                           std::optional<std::uint16_t> default_port) {
    // Port 0 is not a target port: take it off first. (Unbracketed text with several ':' is an
    // IPv6 address without a port.)
    bool any_port =
        value.ends_with("]:0") || (value.ends_with(":0") && value.find(':') == value.size() - 2);
    auto target = parse_target(any_port ? value.substr(0, value.size() - 2) : value);
    if (!target)
        return fail(std::move(target.error()));
    if (!target->user.empty() || (any_port && target->port) ||
        (!any_port && !target->port && !default_port))
        return fail(EINVAL, fmt::format("expected HOST{} without a user, got '{}'",
                                        default_port ? "[:PORT]" : ":PORT", value));
    return ListenAddress{target->host,
                         any_port ? std::uint16_t{0} : target->port.value_or(*default_port)};
}

Result<void> set_listen(std::string_view value, Config& config) {
    auto address = parse_listen_address(value, kDefaultPort);
    if (!address)
        return fail(std::move(address.error()));
    config.listen_host = std::move(address->host);
    config.listen_port = address->port;
    return {};
}

Result<void> set_metrics_listen(std::string_view value, Config& config) {
    if (value.empty()) {
        config.metrics_host.clear();
        config.metrics_port.reset();
        return {};
    }
    auto address = parse_listen_address(value, std::nullopt);
    if (!address)
        return fail(std::move(address.error()));
    config.metrics_host = std::move(address->host);
    config.metrics_port = address->port;
    return {};
}

Result<void> set_client_poolset_dir(std::string_view value, Config& config) {
    auto items = split_list(value);
    if (items.size() != 2)
        return fail(EINVAL, fmt::format("expected 'IDENTITY DIRECTORY', got '{}'", value));
    config.client_poolset_dirs[items[0]] = items[1];
    return {};
}

Result<void> set_shared_pool_set(std::string_view value, Config& config) {
    auto items = split_list(value);
    if (items.size() < 2)
        return fail(EINVAL,
                    fmt::format("expected 'POOL_SET IDENTITY [IDENTITY...]', got '{}'", value));
    auto& identities = config.tenancy.shared[items[0]];
    identities.insert(std::next(items.begin()), items.end());
    return {};
}

Result<void> set_unowned_pool_sets(std::string_view value, Config& config) {
    if (value == "refuse")
        config.tenancy.adopt_unowned = false;
    else if (value == "adopt")
        config.tenancy.adopt_unowned = true;
    else
        return fail(EINVAL, fmt::format("expected 'refuse' or 'adopt', got '{}'", value));
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
        {"shared-pool-set", set_shared_pool_set},
        {"unowned-pool-sets", set_unowned_pool_sets},
        {"persist-apm", set_method(&persist::MethodPolicy::allow_apm, parse_config_switch)},
        {"persist-general", set_method(&persist::MethodPolicy::allow_gpspm, parse_config_switch)},
        {"persist-commit", set_method(&persist::MethodPolicy::allow_commit, parse_config_switch)},
        {"persistence-domain", set_domain},
        {"nic-writes-bypass-cache",
         [](std::string_view value, Config& config) -> Result<void> {
             auto parsed = parse_config_switch(value);
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
        {"use-syslog", set_field(&Config::use_syslog, parse_config_switch)},
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
        {"admin-client",
         [](std::string_view value, Config& config) {
             return append_list(&Config::admin_clients, value, config);
         }},
        {"metrics-listen", set_metrics_listen},
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
        {"responder-spin", set_field(&Config::responder_spin,
                                     [](std::string_view v) {
                                         return parse_config_duration(
                                             v, std::chrono::microseconds(1),
                                             std::chrono::microseconds(0),
                                             std::chrono::microseconds(10'000));
                                     })},
        {"inject-reply-delay", set_field(&Config::inject_reply_delay,
                                         [](std::string_view v) {
                                             return parse_config_duration(
                                                 v, std::chrono::microseconds(1),
                                                 std::chrono::microseconds(0),
                                                 std::chrono::microseconds(1'000'000));
                                         })},
        {"heartbeat", set_field(&Config::heartbeat, parse_duration)},
        {"session-timeout", set_field(&Config::session_timeout, parse_duration)},
        {"port-file", set_field(&Config::port_file, parse_path)},
        {"metrics-port-file", set_field(&Config::metrics_port_file, parse_path)},
        {"user", set_field(&Config::worker_user, parse_path)},
        {"group", set_field(&Config::worker_group, parse_path)},
        {"worker-sandbox", set_field(&Config::worker_sandbox, parse_config_switch)},
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
    auto entries = parse_config_text(text, origin);
    if (!entries)
        return fail(std::move(entries.error()));
    for (const ConfigEntry& entry : *entries) {
        auto where = [&] { return fmt::format("{}:{}", origin, entry.line); };
        auto setter = setters().find(entry.key);
        if (setter == setters().end())
            return fail(EINVAL, fmt::format("{}: unknown key '{}'", where(), entry.key));
        if (auto applied = setter->second(entry.value, config); !applied)
            return fail(EINVAL,
                        fmt::format("{}: {}: {}", where(), entry.key, applied.error().message()));
    }
    return {};
}

Result<CommandLine> parse_command_line(int argc, const char* const* argv) {
    // The options of rpmemd's own, plus one per config key (--KEY VALUE, --KEY=VALUE; PMDK's
    // flag keys also bare, meaning yes), parsed by CLI11. The help text is usage_text().
    CLI::App app("rpmemd", "rpmemd");
    app.set_help_flag();
    CLI::Option* help = app.add_flag("-h,--help");
    CLI::Option* version = app.add_flag("-V,--version");
    std::string config_file;
    CLI::Option* config = app.add_option("-c,--config", config_file);
    std::string remove_set;
    CLI::Option* remove = app.add_option("-r,--remove", remove_set);
    CLI::Option* force = app.add_flag("-f,--force")->needs(remove)->disable_flag_override();
    CLI::Option* pool_set = app.add_flag("-s,--pool-set")->needs(remove)->disable_flag_override();
    std::map<const CLI::Option*, std::string> keys;
    for (const auto& [key, setter] : setters()) {
        std::string names = (key == "nthreads" ? "-t,--" : "--") + key;
        CLI::Option* option =
            is_flag(key)
                ? app.add_flag(names + "{yes}")
                : app.add_option(names)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        keys.emplace(option, key);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return fail(EINVAL, fmt::format("{} (see rpmemd --help)", error.what()));
    }

    CommandLine command_line;
    if (help->count() > 0 || version->count() > 0) {
        command_line.mode =
            help->count() > 0 ? CommandLine::Mode::help : CommandLine::Mode::version;
        return command_line;
    }
    if (config->count() > 0)
        command_line.config_file = config_file;
    if (remove->count() > 0) {
        command_line.mode = CommandLine::Mode::remove;
        command_line.remove_set = remove_set;
    }
    command_line.force = force->count() > 0;
    command_line.remove_pool_set = pool_set->count() > 0;
    // Key options become config lines in the order given, so that a later one wins.
    std::map<const CLI::Option*, std::size_t> taken;
    for (const CLI::Option* option : app.parse_order()) {
        auto key = keys.find(option);
        if (key == keys.end())
            continue;
        const std::string& value = option->results().at(taken[option]++);
        if (value.find_first_of("#\n") != std::string::npos)
            return fail(EINVAL, fmt::format("option '--{}': value may not contain '#' or a "
                                            "line break",
                                            key->second));
        command_line.overrides += key->second + " = " + value + "\n";
    }
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
  -t, --nthreads N         responder threads per data-path worker (default: one per CPU)
  -h, --help               this text
  -V, --version            the version

Every config file key is also an option (--KEY VALUE or --KEY=VALUE) and wins over files:
  poolset-dir, client-poolset-dir, shared-pool-set (SET IDENTITY...: identities that share a
  pool set; by default each pool set is its creator's alone), unowned-pool-sets (refuse|adopt:
  who gets a set with no owner recorded; default refuse, adopt once when upgrading), persist-apm, persist-general, persist-commit,
  persistence-domain (adr|eadr), nic-writes-bypass-cache, platform-type, use-syslog, log-file,
  log-level (err|warn|notice|info|debug), listen (HOST[:PORT], default port 7636), tls-ca,
  tls-cert, tls-key, allow-client, admin-client (identities whose `rpmemctl status` and
  `events` show every identity's sessions), allow-provider, fabric-address, max-lanes,
  max-sessions,
  nthreads, responder-spin (the most a responder busy-polls for the next request, default
  1ms, learnt below that; 0: always block), inject-reply-delay (a test aid: each data-path
  reply leaves that much later, as over a longer link; default 0, at most 1s), heartbeat (a silent client is dropped after it), session-timeout (TLS and Hello
  must finish within it), port-file (written with the bound port once listening), user and
  group (the data-path workers' ids when started as root; default nobody/nogroup),
  worker-sandbox (yes|no, default yes), metrics-listen (HOST:PORT: Prometheus metrics at
  http://HOST:PORT/metrics; HOST:0 any free port) and metrics-port-file (written with it).
Switches take yes/no, true/false, on/off or 1/0.

Each client identity's data path (fabric endpoints, registered pool memory) runs in a
sandboxed worker process of its own; the supervisor keeps TLS, authorization, pool locks and
logging.

Admission limits (keys and options as above):
  max-sessions N              concurrent sessions (default 256)
  max-sessions-per-client N   concurrent sessions of one client identity (default: a quarter
                              of max-sessions, at least 1); more are refused as busy
  max-pending-connections N   connections not yet through TLS and Hello (default 128); at the
                              limit a newcomer from an address holding fewer than the busiest
                              one replaces that one's oldest, others are closed at once
  max-pending-per-source N    of those, from one IP address (default 16); one more takes the
                              place of that address's oldest
rpmemd needs about 64 + max-pending-connections + 17 x max-sessions file descriptors; it raises
its soft RLIMIT_NOFILE up to the hard limit as needed and warns when that is not enough
(systemd: LimitNOFILE=).
)";
}

} // namespace rpmem::daemon
