// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl info TARGET SET [--json]`: what a pool on a running rpmemd is: its size and the
// attributes its headers hold, and the data path a client would get. The protocol has no info
// request (yet), so this opens the pool with one lane and closes it again: it fails with EBUSY
// while another session has the pool open, and briefly starts the session's data plane.
#include <string>

#include "channel/client.h"
#include "command.h"
#include "json_writer.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "protocol/request.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kUsage =
    "usage: rpmemctl info [user@]HOST[:PORT] SET [--json]\n"
    "\n"
    "Opens the pool described by the pool set file SET (relative to rpmemd's pool set\n"
    "directory) and prints its size, its replica state and generation, the attributes in its\n"
    "headers and the persistence method rpmemd chooses for it; then closes it, leaving the\n"
    "state as it was. Fails while another session has the pool open.\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

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

std::string render_json(const std::string& name, const RemoteTarget& remote,
                        const protocol::OpenReply& reply) {
    const auto& path = reply.data_path;
    const auto& a = reply.attributes;
    JsonWriter json;
    json.begin_object();
    json.key("target").value(remote.target.to_string());
    json.key("pool_set").value(name);
    json.key("pool_size").value(path.pool_size);
    json.key("provider").value(path.provider);
    json.key("persist_method").value(protocol::name_of(path.persist_method));
    json.key("state").value(protocol::name_of(reply.state));
    json.key("generation").value(reply.generation);
    json.key("headers").value(!a.is_zero());
    if (!a.is_zero()) {
        json.key("signature").value(signature_text(a));
        json.key("major").value(std::uint64_t{a.major});
        json.key("compat_features").value(std::uint64_t{a.compat_features});
        json.key("incompat_features").value(std::uint64_t{a.incompat_features});
        json.key("ro_compat_features").value(std::uint64_t{a.ro_compat_features});
        json.key("poolset_uuid").value(uuid_text(a.poolset_uuid));
        json.key("uuid").value(uuid_text(a.uuid));
        json.key("next_uuid").value(uuid_text(a.next_uuid));
        json.key("prev_uuid").value(uuid_text(a.prev_uuid));
        json.key("arch_flags").value(hex(a.user_flags));
    }
    json.end_object();
    return json.text();
}

} // namespace

int run_info_command(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    if (printed_help(args, kUsage, out))
        return kExitOk;
    std::vector<std::string_view> positional;
    bool json = false;
    for (std::string_view arg : args) {
        if (arg == "--json") {
            json = true;
        } else if (arg.starts_with("-") || positional.size() == 2) {
            err << "rpmemctl info: unexpected argument '" << arg << "'\n" << kUsage;
            return kExitUsage;
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() != 2) {
        err << "rpmemctl info: expected a target and a pool set name\n" << kUsage;
        return kExitUsage;
    }
    auto remote = RemoteTarget::from(positional[0]);
    if (!remote) {
        err << "rpmemctl info: " << remote.error().message() << "\n";
        return kExitFailure;
    }
    auto control = remote->connect();
    if (!control) {
        err << "rpmemctl info: " << control.error().message() << "\n";
        return kExitFailure;
    }
    protocol::OpenRequest request;
    request.pool_set = std::string(positional[1]);
    request.pool_size = 0; // any size: we ask, not require
    request.lanes = 1;
    request.provider = remote->provider();
    request.persist_method = remote->persist_method();
    auto opened = channel::expect<protocol::OpenReply>((*control)->call(request),
                                                       "opening " + request.pool_set + " on " +
                                                           remote->target.to_string());
    if (!opened) {
        err << "rpmemctl info: " << opened.error().message() << "\n";
        return kExitFailure;
    }
    auto closed = channel::expect<protocol::CloseReply>(
        (*control)->call(protocol::CloseRequest{.untouched = true}), "closing it");
    (*control)->close();
    if (!closed) {
        err << "rpmemctl info: " << closed.error().message() << "\n";
        return kExitFailure;
    }
    if (json)
        out << render_json(request.pool_set, *remote, *opened) << "\n";
    else
        print_text(request.pool_set, *remote, *opened, out);
    return kExitOk;
}

} // namespace rpmem::tools
