// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl status TARGET [--json]`: asks a running rpmemd how it is doing (version, protocol,
// uptime, sessions, the pools in use in the caller's pool set directory).
#include <string>

#include "client/control.h"
#include "command.h"
#include "json_writer.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kUsage =
    "usage: rpmemctl status [user@]HOST[:PORT] [--json]\n"
    "\n"
    "Connects to rpmemd over mutual TLS (RPMEM_TLS_CA, RPMEM_TLS_CERT, RPMEM_TLS_KEY or the\n"
    "client config file) and prints its version, uptime, sessions and pools in use.\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

} // namespace

int run_status_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
    if (printed_help(args, kUsage, out))
        return kExitOk;
    std::optional<std::string_view> target_text;
    bool json = false;
    for (std::string_view arg : args) {
        if (arg == "--json") {
            json = true;
        } else if (!arg.starts_with("-") && !target_text) {
            target_text = arg;
        } else {
            err << "rpmemctl status: unexpected argument '" << arg << "'\n" << kUsage;
            return kExitUsage;
        }
    }
    if (!target_text) {
        err << "rpmemctl status: expected a target\n" << kUsage;
        return kExitUsage;
    }
    auto remote = RemoteTarget::from(*target_text);
    if (!remote) {
        err << "rpmemctl status: " << remote.error().message() << "\n";
        return kExitFailure;
    }
    auto status = client::status(remote->settings, remote->target);
    if (!status) {
        err << "rpmemctl status: " << status.error().message() << "\n";
        return kExitFailure;
    }
    if (json) {
        JsonWriter writer;
        writer.begin_object();
        writer.key("target").value(remote->target.to_string());
        writer.key("software").value(status->software);
        writer.key("protocol_version").value(std::uint64_t{status->protocol_version});
        writer.key("uptime_seconds").value(status->uptime_seconds);
        writer.key("sessions").value(std::uint64_t{status->sessions});
        writer.key("pools_in_use").value(std::uint64_t{status->pools_in_use});
        writer.key("pool_sets").begin_array();
        for (const auto& name : status->pool_sets)
            writer.value(name);
        writer.end_array();
        writer.end_object();
        out << writer.text() << "\n";
        return kExitOk;
    }
    out << remote->target.to_string() << ": " << status->software << ", protocol "
        << status->protocol_version << ", up " << status->uptime_seconds << " s\n"
        << "  sessions: " << status->sessions << "\n"
        << "  pools in use: " << status->pools_in_use << "\n";
    for (const auto& name : status->pool_sets)
        out << "    " << name << "\n";
    return kExitOk;
}

} // namespace rpmem::tools
