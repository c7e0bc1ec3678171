// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl info TARGET SET [--json]`: what a pool on a running rpmemd is: its size and the
// attributes its headers hold, and the data path a client would get. The protocol has no info
// request (yet), so this opens the pool with one lane and closes it again: it fails with EBUSY
// while another session has the pool open, and briefly starts the session's data plane.
#include <string>

#include "channel/client.h"
#include "command.h"
#include "json_text.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "protocol/request.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

struct InfoOptions {
    std::string target;
    std::string pool_set;
    bool json = false;
};

std::string hex(std::span<const std::uint8_t> bytes) {
    std::string text;
    for (auto b : bytes)
        text += fmt::format("{:02x}", b);
    return text;
}

std::string features_text(std::uint32_t incompat) {
    std::string text;
    auto add = [&](std::uint32_t bit, const char* name) {
        if ((incompat & bit) != 0)
            text += text.empty() ? name : std::string(" ") + name;
    };
    add(poolset::kFeatureSingleHeader, "SINGLEHDR");
    add(poolset::kFeatureChecksum2K, "CKSUM_2K");
    add(poolset::kFeatureShutdownState, "SDS");
    return text.empty() ? "none" : text;
}

void print_text(const std::string& name, const RemoteTarget& remote,
                const protocol::OpenReply& reply, std::ostream& out) {
    const auto& path = reply.data_path;
    const auto& a = reply.attributes;
    out << name << " on " << remote.target.to_string() << "\n"
        << "  pool size: " << poolset::format_size(path.pool_size) << " (" << path.pool_size
        << " bytes)\n"
        << "  data path: " << path.provider << ", " << path.lanes << " lane(s), persistence "
        << protocol::name_of(path.persist_method) << "\n"
        << "  replica: " << protocol::name_of(reply.state) << ", generation " << reply.generation
        << "\n";
    if (a.is_zero()) {
        out << "  headers: none (OPTION NOHDRS)\n";
        return;
    }
    out << "  signature: " << signature_text(a) << "\n"
        << "  major: " << a.major << "\n"
        << "  features: compat 0x" << fmt::format("{:x}", a.compat_features) << ", incompat 0x"
        << fmt::format("{:x}", a.incompat_features) << " (" << features_text(a.incompat_features)
        << "), ro_compat 0x" << fmt::format("{:x}", a.ro_compat_features) << "\n"
        << "  pool set uuid: " << uuid_text(a.poolset_uuid) << "\n"
        << "  uuid: " << uuid_text(a.uuid) << "\n"
        << "  next replica uuid: " << uuid_text(a.next_uuid) << "\n"
        << "  prev replica uuid: " << uuid_text(a.prev_uuid) << "\n"
        << "  arch flags: " << hex(a.user_flags) << "\n";
}

Json info_json(const std::string& name, const RemoteTarget& remote,
               const protocol::OpenReply& reply) {
    const auto& path = reply.data_path;
    const auto& a = reply.attributes;
    Json json = {
        {"target", remote.target.to_string()},
        {"pool_set", name},
        {"pool_size", path.pool_size},
        {"provider", path.provider},
        {"persist_method", protocol::name_of(path.persist_method)},
        {"state", protocol::name_of(reply.state)},
        {"generation", reply.generation},
        {"headers", !a.is_zero()},
    };
    if (!a.is_zero()) {
        json["signature"] = signature_text(a);
        json["major"] = a.major;
        json["compat_features"] = a.compat_features;
        json["incompat_features"] = a.incompat_features;
        json["ro_compat_features"] = a.ro_compat_features;
        json["poolset_uuid"] = uuid_text(a.poolset_uuid);
        json["uuid"] = uuid_text(a.uuid);
        json["next_uuid"] = uuid_text(a.next_uuid);
        json["prev_uuid"] = uuid_text(a.prev_uuid);
        json["arch_flags"] = hex(a.user_flags);
    }
    return json;
}

int run_info(const InfoOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "info", remote.error());
    auto control = remote->connect();
    if (!control)
        return report_failure(err, "info", control.error());
    protocol::OpenRequest request;
    request.pool_set = options.pool_set;
    request.pool_size = 0; // any size: we ask, not require
    request.lanes = 1;
    request.provider = remote->provider();
    request.persist_method = remote->persist_method();
    auto opened = channel::expect<protocol::OpenReply>((*control)->call(request),
                                                       "opening " + request.pool_set + " on " +
                                                           remote->target.to_string());
    if (!opened)
        return report_failure(err, "info", opened.error());
    auto closed = channel::expect<protocol::CloseReply>(
        (*control)->call(protocol::CloseRequest{.untouched = true}), "closing it");
    (*control)->close();
    if (!closed)
        return report_failure(err, "info", closed.error());
    if (options.json)
        out << json_text(info_json(request.pool_set, *remote, *opened)) << "\n";
    else
        print_text(request.pool_set, *remote, *opened, out);
    return kExitOk;
}

} // namespace

void add_info_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "info", "size, state and attributes of a pool on rpmemd",
        "Open the pool described by the pool set file SET (relative to rpmemd's pool set\n"
        "directory) and print its size, its replica state and generation, the attributes in its\n"
        "headers and the persistence method rpmemd chooses for it; then close it, leaving the\n"
        "state as it was. Fails while another session has the pool open.",
        kRemoteFooter, output, &run_info);
    command->add_option("TARGET", options->target, "rpmemd, as [user@]HOST[:PORT]")->required();
    command->add_option("SET", options->pool_set, "the pool set file, as rpmemd names it")
        ->required();
    command->add_flag("--json", options->json, "one JSON object");
}

} // namespace rpmem::tools
