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
#include "json_text.h"
#include "poolset/parser.h"
#include "poolset/pool_set.h"
#include "set_file.h"

namespace rpmem::tools {

namespace {

struct CheckOptions {
    std::string file;
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

Json size_json(std::optional<std::uint64_t> size) {
    return size ? Json(*size) : Json(nullptr);
}

Json replica_json(const poolset::PoolSet& set, const poolset::ReplicaSpec& replica) {
    Json json = {{"line", replica.line}};
    if (replica.is_remote()) {
        const poolset::RemoteReplica& remote = *replica.remote;
        json["type"] = "remote";
        json["target"] = {
            {"user", remote.target.user.empty() ? Json(nullptr) : Json(remote.target.user)},
            {"host", remote.target.host},
            {"port", remote.target.port ? Json(*remote.target.port) : Json(nullptr)},
        };
        json["set"] = remote.set_path;
        return json;
    }
    json["type"] = "local";
    json["headers"] = set.header_count(replica);
    json["net_size"] = size_json(set.net_size(replica));
    Json parts = Json::array();
    for (const poolset::Part& part : replica.parts)
        parts.push_back({{"size", part.size ? Json(*part.size) : Json("AUTO")},
                         {"path", part.path},
                         {"line", part.line}});
    json["parts"] = std::move(parts);
    return json;
}

Json pool_set_json(const poolset::PoolSet& set) {
    Json replicas = Json::array();
    for (const poolset::ReplicaSpec& replica : set.replicas)
        replicas.push_back(replica_json(set, replica));
    return {
        {"file", set.origin},
        {"valid", true},
        {"options", {{"singlehdr", set.options.single_header}, {"nohdrs", set.options.no_headers}}},
        {"pool_size", size_json(set.pool_size())},
        {"replicas", std::move(replicas)},
    };
}

int check(const CheckOptions& options, std::ostream& out, std::ostream&) {
    const std::string& path = options.file;
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
            out << json_text(
                       {{"file", path}, {"valid", false}, {"error", checked.error().message()}})
                << "\n";
        else
            out << "invalid pool set: " << checked.error().message() << "\n";
        return kExitFailure;
    }
    if (options.json)
        out << json_text(pool_set_json(*checked)) << "\n";
    else
        print_text(*checked, out);
    return kExitOk;
}

} // namespace

void add_poolset_command(CLI::App& app, CommandOutput& output) {
    CLI::App* poolset = app.add_subcommand("poolset", "Check pool set files (poolset(5)).");
    poolset->require_subcommand(1, 1);
    auto [command, options] = add_command(
        *poolset, "check", "check a pool set file",
        "Parse a pool set file (poolset(5)) and print its replicas, parts, remote targets,\n"
        "options and net pool size per replica, or what is wrong with it.",
        "Exit status: 0 valid, 1 invalid or unreadable, 2 usage error.", output, &check);
    command->add_option("FILE", options->file, "the pool set file")->required();
    command->add_flag("--json", options->json, "print the result as one JSON object");
    command->add_flag("--target", options->target,
                      "check the rules of a set served by rpmemd (no replicas, NOHDRS allowed, "
                      "2 MiB parts, 8 KiB pool) instead of those of a local libpmemobj pool "
                      "(8 MiB pool, 2 MiB parts, no NOHDRS)");
}

} // namespace rpmem::tools
