// SPDX-License-Identifier: BSD-3-Clause
// Writes one valid frame of each message type into the directory given as argument: the seed
// corpus of the protocol fuzzer (corpus/protocol/). Run once after a protocol change and commit
// the files: `make_protocol_seeds test/fuzz/protocol/corpus/protocol`.
#include <cstdio>
#include <fstream>
#include <string>

#include "protocol/codec.h"

namespace protocol = rpmem::protocol;

namespace {

rpmem::PoolAttributes attributes() {
    rpmem::PoolAttributes a;
    a.signature = {'P', 'M', 'E', 'M', 'O', 'B', 'J', '\0'};
    a.major = 6;
    a.incompat_features = 0x3;
    a.poolset_uuid.fill(0x11);
    a.uuid.fill(0x22);
    a.next_uuid.fill(0x33);
    a.prev_uuid.fill(0x44);
    a.user_flags.fill(0x55);
    return a;
}

protocol::DataPath data_path() {
    protocol::DataPath d;
    d.provider = "tcp";
    d.host = "127.0.0.1";
    d.port = 7637;
    d.remote_base = 0x7f0000000000;
    d.remote_key = 42;
    d.lanes = 4;
    d.persist_method = protocol::PersistMethod::gpspm;
    d.inline_buffer_size = 8192;
    d.pool_size = 1 << 24;
    d.token.fill(0x5a);
    return d;
}

template <typename Message>
bool write_seed(const std::string& dir, const std::string& name, const Message& message) {
    auto frame = protocol::encode(message, 1);
    if (!frame) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), frame.error().message().c_str());
        return false;
    }
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(frame->data()),
              static_cast<std::streamsize>(frame->size()));
    return static_cast<bool>(out);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
        return 2;
    }
    std::string dir = argv[1];
    using protocol::Reply;
    using protocol::Request;

    protocol::CreateRequest create{
        "pool.set",  1 << 24, 4, protocol::ProviderPreference::tcp, protocol::PersistMethod::any,
        attributes()};
    protocol::OpenRequest open{"dir/pool.set", 1 << 24, 4, protocol::ProviderPreference::any,
                               protocol::PersistMethod::commit};
    protocol::HelloReply hello_reply{protocol::Status::ok, "", 1,    3,
                                     "rpmemd 0.1.0",       7,  5000, "alice"};
    protocol::StatusReply status_reply;
    status_reply.software = "rpmemd 0.1.0";
    status_reply.protocol_version = 2;
    status_reply.uptime_seconds = 60;
    status_reply.sessions = 2;
    status_reply.pools_in_use = 1;
    status_reply.max_sessions = 64;
    status_reply.visible_sessions = 2;
    protocol::SessionStatus session;
    session.id = 3;
    session.identity = "alice";
    session.peer = "127.0.0.1:40000";
    session.pool_set = "b/c.set";
    session.provider = "tcp";
    session.persist_method = protocol::PersistMethod::gpspm;
    session.method_reason = "the only method allowed";
    session.lanes = 2;
    session.state = protocol::ReplicaState::inconsistent;
    session.generation = 1;
    status_reply.session_list = {session, protocol::SessionStatus{}};
    protocol::EventsReply events_reply;
    events_reply.oldest_sequence = 1;
    events_reply.newest_sequence = 2;
    protocol::DaemonEvent opened;
    opened.sequence = 1;
    opened.kind = protocol::EventKind::session_opened;
    opened.session_id = 3;
    opened.identity = "alice";
    protocol::DaemonEvent changed = opened;
    changed.sequence = 2;
    changed.kind = protocol::EventKind::state_changed;
    changed.pool_set = "b/c.set";
    changed.has_state = true;
    changed.state = protocol::ReplicaState::consistent;
    changed.generation = 1;
    changed.reason = "closed";
    events_reply.events = {opened, changed};

    bool ok =
        write_seed(dir, "hello", Request(protocol::Hello{1, 1, 3, "librpmem 0.1.0"})) &&
        write_seed(dir, "create", Request(create)) &&
        write_seed(dir, "create_noattrs",
                   Request(protocol::CreateRequest{"x.set", 8192, 1, {}, {}, {}})) &&
        write_seed(dir, "open", Request(open)) &&
        write_seed(dir, "close", Request(protocol::CloseRequest{true})) &&
        write_seed(dir, "set_attr", Request(protocol::SetAttrRequest{attributes()})) &&
        write_seed(dir, "remove", Request(protocol::RemoveRequest{"pool.set", true, true})) &&
        write_seed(dir, "status", Request(protocol::StatusRequest{})) &&
        write_seed(dir, "ping", Request(protocol::Ping{})) &&
        write_seed(dir, "hello_reply", Reply(hello_reply)) &&
        write_seed(dir, "create_reply", Reply(protocol::CreateReply{{}, "gpspm", data_path()})) &&
        write_seed(dir, "open_reply",
                   Reply(protocol::OpenReply{{}, "", data_path(), attributes()})) &&
        write_seed(dir, "close_reply", Reply(protocol::CloseReply{})) &&
        write_seed(dir, "set_attr_reply",
                   Reply(protocol::SetAttrReply{protocol::Status::invalid_request, "zero"})) &&
        write_seed(dir, "remove_reply",
                   Reply(protocol::RemoveReply{protocol::Status::no_exist, "no such set"})) &&
        write_seed(dir, "status_reply", Reply(status_reply)) &&
        write_seed(dir, "pong", Reply(protocol::Pong{})) &&
        write_seed(dir, "error_reply",
                   Reply(protocol::ErrorReply{protocol::Status::bad_message, "bad magic"})) &&
        write_seed(dir, "digest", Request(protocol::DigestRequest{4096, 3 << 20, 1 << 20})) &&
        write_seed(
            dir, "digest_reply",
            Reply(protocol::DigestReply{{}, "", {0x2d06800538d394c2, 0x78af5f94892f3950, 1}})) &&
        write_seed(dir, "events", Request(protocol::EventsRequest{1})) &&
        write_seed(dir, "events_reply", Reply(events_reply)) &&
        write_seed(dir, "resync_report",
                   Request(protocol::ResyncReport{protocol::ResyncPhase::progress, 4096, 8192})) &&
        write_seed(dir, "resync_report_reply", Reply(protocol::ResyncReportReply{})) &&
        write_seed(dir, "promote", Request(protocol::PromoteRequest{"b/c.set", true})) &&
        write_seed(dir, "promote_reply",
                   Reply(protocol::PromoteReply{
                       {}, "forced", protocol::ReplicaState::outdated, 1, 2, 1})) &&
        write_seed(dir, "demote", Request(protocol::DemoteRequest{"b/c.set", 2})) &&
        write_seed(dir, "demote_reply",
                   Reply(protocol::DemoteReply{{}, "", protocol::ReplicaState::consistent, 1})) &&
        write_seed(dir, "rejoin",
                   Request(protocol::RejoinRequest{"b/c.set", 2, attributes().poolset_uuid,
                                                   attributes().next_uuid})) &&
        write_seed(dir, "rejoin_reply",
                   Reply(protocol::RejoinReply{
                       {}, "", attributes().uuid, protocol::ReplicaState::outdated, 2})) &&
        write_seed(dir, "attach_replica",
                   Request(protocol::AttachReplicaRequest{"b/c.set", attributes().uuid})) &&
        write_seed(dir, "attach_replica_reply",
                   Reply(protocol::AttachReplicaReply{{},
                                                      "",
                                                      attributes().poolset_uuid,
                                                      attributes().next_uuid,
                                                      attributes().uuid,
                                                      protocol::ReplicaState::promoted,
                                                      2,
                                                      true,
                                                      false}));
    return ok ? 0 : 1;
}
