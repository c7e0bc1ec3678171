// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "persist/method_choice.h"
#include "persist/platform.h"
#include "rpmemd/supervisor/pool_tenancy.h"

namespace rpmem::daemon {

// PMDK's level names, kept so existing config files work.
enum class LogLevel { err, warn, notice, info, debug };

std::string_view to_string(LogLevel level) noexcept;

inline constexpr std::uint16_t kDefaultPort = 7636;

// Everything rpmemd is configured with: PMDK's keys (poolset-dir, persist-apm, persist-general,
// use-syslog, log-file, log-level) plus the TLS, access, fabric and platform keys this daemon
// adds. A value type, filled from files and the command line once, at start-up.
struct Config {
    // Pool set files resolve beneath this directory. "$HOME" as a whole word is replaced by the
    // home directory when the file is read.
    std::string poolset_dir = "$HOME";
    // Per-identity override of poolset_dir: client identity -> directory.
    std::map<std::string, std::string> client_poolset_dirs;
    // Each pool set is the identity's that created it; these keys share sets and say what
    // becomes of sets with no owner recorded (shared-pool-set, unowned-pool-sets).
    PoolTenancy tenancy;

    persist::MethodPolicy methods;
    persist::Platform platform;

    // Logging: stderr (the systemd journal) unless use_syslog or log_file says otherwise.
    bool use_syslog = false;
    std::string log_file; // empty: not to a file
    LogLevel log_level = LogLevel::err;

    std::string listen_host = "0.0.0.0";
    std::uint16_t listen_port = kDefaultPort;
    std::string tls_ca;
    std::string tls_cert;
    std::string tls_key;
    // Client identities (certificate names) admitted; empty admits every client whose
    // certificate the CA signed.
    std::vector<std::string> allowed_clients;
    // Client identities that `rpmemctl status` and `events` show every identity's sessions and
    // events; any other identity sees its own only.
    std::vector<std::string> admin_clients;
    // Where /metrics (Prometheus text format) is served over plain HTTP, `HOST:PORT`; empty:
    // nowhere. Meant for a local address: the metrics name pool sets and identities.
    std::string metrics_host;
    std::optional<std::uint16_t> metrics_port;
    // Once serving metrics, rpmemd writes their bound port here (as port-file does).
    std::string metrics_port_file;

    // Fabric providers offered to clients; empty allows every provider found.
    std::vector<std::string> allowed_providers;
    // The fabric listener binds here; empty: the address the TLS session arrived on.
    std::string fabric_host;
    unsigned max_lanes = 16; // granted lanes per session at most
    // Concurrent sessions at most. The default fits rpmemd.service's LimitNOFILE many times
    // over (fd_budget.h; checked by a test).
    unsigned max_sessions = 256;
    // Concurrent sessions of one client identity; 0: a quarter of max_sessions (at least 1),
    // which effective_max_sessions_per_client() works out.
    unsigned max_sessions_per_client = 0;
    // Connections accepted but not yet through the TLS handshake and Hello: in total, and per
    // source IP address (one over that replaces the source's oldest). Bounds what unauthenticated
    // peers can hold: descriptors, TLS state, memory.
    unsigned max_pending_connections = 128;
    unsigned max_pending_per_source = 16;
    // Responder threads per data-path worker (PMDK's -t/--nthreads): each worker polls all its
    // sessions with at most this many threads (min(nthreads, sessions) run). 0: one per
    // online CPU.
    unsigned nthreads = 0;
    // The most a responder thread busy-polls for its sessions' next request before it blocks
    // on their wait descriptors; within it, fabric::WaitController learns the gaps between
    // requests (none while quiet or while spinning loses the CPU to others). 0: always block.
    std::chrono::microseconds responder_spin{1000};
    // A test and planning aid: every data-path reply leaves this much later, as over a link
    // with that much more round trip (0: off). Held by a timer in the session's worker, in
    // order; no CPU is spent on it.
    std::chrono::microseconds inject_reply_delay{0};
    // A client that sends no frame (request or heartbeat ping) for this long is taken for dead:
    // its session ends, its data plane is fenced and its pool released. Told to clients in the
    // Hello reply; librpmem pings every second (or a third of this, if shorter). Generous by
    // default: a client that dies closes its TCP connection at once, this only catches frozen
    // or cut-off ones, and a busy 2-core machine can delay a ping by a second.
    std::chrono::milliseconds heartbeat{10000};
    // A new connection must complete the TLS handshake and the Hello exchange within this.
    std::chrono::milliseconds session_timeout{10000};
    // Once listening, rpmemd writes the bound port (a decimal line) to this file; empty: none.
    // For `listen = HOST:0` (tests, socket-activated setups) and for scripts.
    std::string port_file;

    // The data-path workers (one process per client identity) run as this user and group
    // (names or numbers) when rpmemd starts as root; unset: nobody/nogroup. They need no file
    // access of their own: the supervisor hands them the pool files open.
    std::string worker_user;
    std::string worker_group;
    // Workers enter their sandbox (no new privileges, no file system, a system call allow-list).
    // `no` is for debugging a worker only.
    bool worker_sandbox = true;
};

// max_sessions_per_client, or its default when 0: max(1, max_sessions / 4).
unsigned effective_max_sessions_per_client(const Config& config) noexcept;

// Applies the `key = value` lines of one config file to `config`. `#` starts a comment
// anywhere; blank lines are ignored; unknown keys, malformed lines and bad values are errors
// naming `origin` and the line.
Result<void> apply_config_text(std::string_view text, std::string_view origin, Config& config);

// What the command line asks for: the options given (which win over files) and the mode.
struct CommandLine {
    enum class Mode { serve, remove, help, version };
    Mode mode = Mode::serve;
    std::optional<std::string> config_file; // --config: only this file is read
    std::string remove_set;                 // --remove SET
    bool force = false;                     // --force
    bool remove_pool_set = false;           // --pool-set
    // Every other option, as `key = value` lines in the config file syntax, applied after the
    // files so that they win.
    std::string overrides;
};

Result<CommandLine> parse_command_line(int argc, const char* const* argv);

// Where the config files are and what $HOME is: read from the environment by main(), once.
struct ConfigSources {
    std::string home; // replaces $HOME in poolset-dir
    std::string system_file = "/etc/rpmemd/rpmemd.conf";
    std::string user_file; // $HOME/.rpmemd.conf; empty: none
};

// Defaults, then the system and user files (when present) or only the --config file (which
// must exist), then the command line; finally $HOME is expanded and the result checked (an
// absolute poolset-dir, TLS files named, sane limits).
Result<Config> load_config(const CommandLine& command_line, const ConfigSources& sources);

// The usage text of `rpmemd --help`.
std::string usage_text();

} // namespace rpmem::daemon
