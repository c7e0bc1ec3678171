// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl poolset check FILE [--json] [--target]`: parses a pool set file and prints its
// structure (or the error). Exit status 0: valid; 1: invalid or unreadable; 2: usage error.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include "command.h"
#include "json_writer.h"
#include "poolset/parser.h"
#include "poolset/pool_set.h"
#include "set_file.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kUsage =
    "usage: rpmemctl poolset check FILE [--json] [--target]\n"
    "\n"
    "Parses a pool set file (poolset(5)) and prints its replicas, parts, remote targets,\n"
    "options and net pool size per replica, or what is wrong with it.\n"
    "\n"
    "  --json    print the result as one JSON object\n"
    "  --target  check the rules of a set served by rpmemd (no replicas, NOHDRS allowed,\n"
    "            2 MiB parts, 8 KiB pool) instead of those of a local libpmemobj pool\n"
    "            (8 MiB pool, 2 MiB parts, no NOHDRS)\n"
    "\n"
    "Exit status: 0 valid, 1 invalid or unreadable, 2 usage error.\n";

struct CheckOptions {
    std::string_view file;
    bool json = false;
    bool target = false;
};

std::string size_text(std::optional<std::uint64_t> size) {
    if (!size)
        return "unknown (AUTO parts take the device's size)";
    return poolset::format_size(*size) + " (" + std::to_string(*size) + " bytes)";
}

std::string options_text(const poolset::Options& options) {
    std::string text;
    if (options.single_header)
        text += "SINGLEHDR";
    if (options.no_headers)
        text += text.empty() ? "NOHDRS" : " NOHDRS";
    return text.empty() ? "none" : text;
}

void print_text(const poolset::PoolSet& set, std::ostream& out) {
    out << set.origin << ": valid pool set\n";
    out << "  options: " << options_text(set.options) << "\n";
    out << "  pool size: " << size_text(set.pool_size()) << "\n";
    for (std::size_t r = 0; r < set.replicas.size(); ++r) {
        const poolset::ReplicaSpec& replica = set.replicas[r];
        if (replica.is_remote()) {
            const poolset::RemoteReplica& remote = *replica.remote;
            out << "  replica " << r << ": remote, line " << replica.line << "\n";
            out << "    target: " << remote.target.to_string()
                << " (user: " << (remote.target.user.empty() ? "-" : remote.target.user)
                << ", host: " << remote.target.host << ", port: "
                << (remote.target.port ? std::to_string(*remote.target.port) : "default") << ")\n";
            out << "    remote set: " << remote.set_path << "\n";
            continue;
        }
        out << "  replica " << r << ": local, line " << replica.line << ", " << replica.parts.size()
            << (replica.parts.size() == 1 ? " part, " : " parts, ") << set.header_count(replica)
            << (set.header_count(replica) == 1 ? " header" : " headers") << ", net size "
            << size_text(set.net_size(replica)) << "\n";
        for (std::size_t p = 0; p < replica.parts.size(); ++p) {
            const poolset::Part& part = replica.parts[p];
            out << "    part " << p << ": "
                << (part.size ? poolset::format_size(*part.size) : std::string("AUTO")) << "  "
                << part.path << "  (line " << part.line << ")\n";
        }
    }
}

void write_json_size(JsonWriter& json, std::optional<std::uint64_t> size) {
    if (size)
        json.value(*size);
    else
        json.null();
}

std::string render_json(const poolset::PoolSet& set) {
    JsonWriter json;
    json.begin_object();
    json.key("file").value(set.origin);
    json.key("valid").value(true);
    json.key("options").begin_object();
    json.key("singlehdr").value(set.options.single_header);
    json.key("nohdrs").value(set.options.no_headers);
    json.end_object();
    json.key("pool_size");
    write_json_size(json, set.pool_size());
    json.key("replicas").begin_array();
    for (const poolset::ReplicaSpec& replica : set.replicas) {
        json.begin_object();
        json.key("line").value(std::uint64_t{replica.line});
        if (replica.is_remote()) {
            const poolset::RemoteReplica& remote = *replica.remote;
            json.key("type").value("remote");
            json.key("target").begin_object();
            json.key("user");
            if (remote.target.user.empty())
                json.null();
            else
                json.value(remote.target.user);
            json.key("host").value(remote.target.host);
            json.key("port");
            if (remote.target.port)
                json.value(std::uint64_t{*remote.target.port});
            else
                json.null();
            json.end_object();
            json.key("set").value(remote.set_path);
        } else {
            json.key("type").value("local");
            json.key("headers").value(std::uint64_t{set.header_count(replica)});
            json.key("net_size");
            write_json_size(json, set.net_size(replica));
            json.key("parts").begin_array();
            for (const poolset::Part& part : replica.parts) {
                json.begin_object();
                json.key("size");
                if (part.size)
                    json.value(*part.size);
                else
                    json.value("AUTO");
                json.key("path").value(part.path);
                json.key("line").value(std::uint64_t{part.line});
                json.end_object();
            }
            json.end_array();
        }
        json.end_object();
    }
    json.end_array();
    json.end_object();
    return json.text();
}

std::string render_json_error(std::string_view file, const Error& error) {
    JsonWriter json;
    json.begin_object();
    json.key("file").value(file);
    json.key("valid").value(false);
    json.key("error").value(error.message());
    json.end_object();
    return json.text();
}

int check(const CheckOptions& options, std::ostream& out) {
    std::string path(options.file);
    auto checked =
        load_set_file(path).and_then([&](poolset::PoolSet set) -> Result<poolset::PoolSet> {
            auto valid =
                options.target ? poolset::validate_for_target(set) : poolset::validate_local(set);
            if (!valid)
                return tl::unexpected(std::move(valid.error()));
            return set;
        });
    if (!checked) {
        if (options.json)
            out << render_json_error(path, checked.error()) << "\n";
        else
            out << "invalid pool set: " << checked.error().message() << "\n";
        return kExitFailure;
    }
    if (options.json)
        out << render_json(*checked) << "\n";
    else
        print_text(*checked, out);
    return kExitOk;
}

} // namespace

int run_poolset_command(std::span<const std::string_view> args, std::ostream& out,
                        std::ostream& err) {
    if (printed_help(args, kUsage, out))
        return kExitOk;
    if (args.empty() || args[0] != "check") {
        err << "rpmemctl poolset: expected the subcommand 'check'\n" << kUsage;
        return kExitUsage;
    }
    CheckOptions options;
    bool have_file = false;
    for (std::string_view arg : args.subspan(1)) {
        if (arg == "--json") {
            options.json = true;
        } else if (arg == "--target") {
            options.target = true;
        } else if (arg == "--help" || arg == "-h") {
            out << kUsage;
            return kExitOk;
        } else if (arg.size() > 1 && arg.front() == '-' && arg != "--") {
            err << "rpmemctl poolset check: unknown option '" << arg << "'\n" << kUsage;
            return kExitUsage;
        } else if (!have_file) {
            options.file = arg;
            have_file = true;
        } else {
            err << "rpmemctl poolset check: more than one FILE given\n" << kUsage;
            return kExitUsage;
        }
    }
    if (!have_file) {
        err << "rpmemctl poolset check: missing FILE\n" << kUsage;
        return kExitUsage;
    }
    return check(options, out);
}

} // namespace rpmem::tools
