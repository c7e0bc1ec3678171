// SPDX-License-Identifier: BSD-3-Clause
// DaemonSession, the daemon's functional core, on real pool files. The data plane is the one test
// double here (the DataPlaneFactory seam): it records what the session asked of it and checks,
// when stopped, that the pool was still locked (fencing comes before unlocking). The real data
// plane (FabricTarget) is exercised by the integration tests against a real rpmemd.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "pool_fixtures.h"
#include "poolset/parser.h"
#include "poolset/pool_mapping.h"
#include "protocol/extent_digest.h"
#include "rpmemd/supervisor/daemon_session.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;
using protocol::Status;
using test::TempDir;

namespace {

// What the session asked of the test data planes.
struct PlaneRecord {
    std::vector<DataPlaneRequest> requests;
    int stops = 0;
    std::vector<bool> locked_at_stop; // per stop(): were the pool's parts still locked?
    std::optional<Error> failure;     // the factory's answer when set
    persist::ProviderTraits traits{.software = true, .offers_rma_pmem = true};
};

class TestDataPlane final : public DataPlane {
public:
    TestDataPlane(DataPlaneInfo info, poolset::PoolSet set, PlaneRecord& record)
        : info_(std::move(info))
        , set_(std::move(set))
        , record_(record) {}
    ~TestDataPlane() override { stop(); }

    const DataPlaneInfo& info() const noexcept override { return info_; }

    void stop() noexcept override {
        if (stopped_)
            return;
        stopped_ = true;
        ++record_.stops;
        auto probe = poolset::PoolMapping::open(set_);
        record_.locked_at_stop.push_back(!probe && probe.error().errno_value() == EBUSY);
    }

private:
    DataPlaneInfo info_;
    poolset::PoolSet set_;
    PlaneRecord& record_;
    bool stopped_ = false;
};

DataPlaneFactory test_factory(PlaneRecord& record) {
    return [&record](const DataPlaneRequest& request) -> Result<std::unique_ptr<DataPlane>> {
        record.requests.push_back(request);
        if (record.failure)
            return fail(*record.failure);
        DataPlaneInfo info;
        info.path.provider = "tcp";
        info.path.host = request.bind_host;
        info.path.port = 4242;
        info.path.remote_base = 0x7f0000000000;
        info.path.remote_key = 77;
        info.path.lanes = request.lanes;
        info.path.inline_buffer_size = 4096;
        info.traits = record.traits;
        return std::make_unique<TestDataPlane>(info, request.pool->set(), record);
    };
}

// A daemon's worth of session services over a scratch directory.
struct Fixture {
    TempDir dir;
    Config config;
    PlaneRecord record;
    std::optional<PoolStore> store;
    SessionDirectory directory;
    EventLog events{64};
    std::optional<SessionServices> services;
    std::uint64_t next_session = 1;

    Fixture() {
        config.poolset_dir = dir / "sets";
        config.max_lanes = 4;
        config.allowed_providers = {"tcp", "sockets"};
        // These tests hand one pool from session to session, of several identities: they share it
        // explicitly (each identity's sets are its own by default; tenancy_test covers that).
        config.tenancy.shared["pool.set"] = {"alice", "bob", "carol", "dave"};
        store.emplace(config.poolset_dir, config.client_poolset_dirs, default_resolve_method(),
                      config.tenancy);
        services.emplace(SessionServices{config, *store, test_factory(record), directory, events,
                                         [] { return 3; }});
        dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 2));
        dir.write("sets/bare.set", test::pool_set_text(dir.path(), "bare", 1, "2M", "NOHDRS"));
    }

    std::unique_ptr<DaemonSession> session(std::string identity = "alice") {
        channel::PeerInfo peer{next_session++, std::move(identity), "127.0.0.1", 40000};
        return std::make_unique<DaemonSession>(*services, peer);
    }

    bool part_exists(const std::string& name) const {
        return std::filesystem::exists(dir.path() / name);
    }
};

protocol::CreateRequest create_request(std::string name = "pool.set", std::uint32_t lanes = 8) {
    protocol::CreateRequest r;
    r.pool_set = std::move(name);
    r.pool_size = 2u << 20;
    r.lanes = lanes;
    r.attributes = test::pmemobj_attributes();
    return r;
}

protocol::OpenRequest open_request(std::string name = "pool.set", std::uint32_t lanes = 2) {
    protocol::OpenRequest r;
    r.pool_set = std::move(name);
    r.pool_size = 2u << 20;
    r.lanes = lanes;
    return r;
}

template <typename ReplyType>
const ReplyType& as(const protocol::Reply& reply) {
    REQUIRE(std::holds_alternative<ReplyType>(reply));
    return std::get<ReplyType>(reply);
}

} // namespace

TEST_CASE("create starts the data plane and replies with the data path; open returns the "
          "attributes") {
    Fixture f;
    auto alice = f.session();
    auto reply = alice->handle(create_request());
    const auto& created = as<protocol::CreateReply>(reply);
    REQUIRE(created.status == Status::ok);

    REQUIRE(f.record.requests.size() == 1);
    const DataPlaneRequest& asked = f.record.requests[0];
    CHECK(asked.lanes == 4); // 8 requested, max-lanes 4
    CHECK(asked.protected_prefix == 4096);
    CHECK(asked.allowed_providers == f.config.allowed_providers);
    CHECK(asked.provider == protocol::ProviderPreference::any);
    CHECK(asked.bind_host == "127.0.0.1"); // the route back to the client
    CHECK(asked.session_name == "session 1");
    CHECK(asked.token != protocol::SessionToken{});

    const protocol::DataPath& path = created.data_path;
    CHECK(path.provider == "tcp");
    CHECK(path.host == "127.0.0.1");
    CHECK(path.port == 4242);
    CHECK(path.remote_base == 0x7f0000000000);
    CHECK(path.remote_key == 77);
    CHECK(path.lanes == 4);
    CHECK(path.inline_buffer_size == 4096);
    CHECK(path.pool_size == (4u << 20) - 4096);
    CHECK(path.token == asked.token);
    // A file-backed pool on a software provider: commit and APM are not durable, GPSPM is.
    CHECK(path.persist_method == protocol::PersistMethod::gpspm);
    CHECK_FALSE(created.message.empty());

    CHECK(f.part_exists("pool.0"));
    auto closed = alice->handle(protocol::CloseRequest{});
    CHECK(as<protocol::CloseReply>(closed).status == Status::ok);
    CHECK(f.record.stops == 1);
    CHECK(f.record.locked_at_stop == std::vector<bool>{true});

    auto bob = f.session("bob");
    auto opened = bob->handle(open_request());
    const auto& open_reply = as<protocol::OpenReply>(opened);
    REQUIRE(open_reply.status == Status::ok);
    CHECK(open_reply.attributes == test::pmemobj_attributes());
    CHECK(open_reply.data_path.lanes == 2);
    CHECK(open_reply.data_path.token != path.token); // one-time: fresh for every pool opening
}

TEST_CASE("a session owns one pool; requests out of order are refused") {
    Fixture f;
    auto s = f.session();
    CHECK(as<protocol::CloseReply>(s->handle(protocol::CloseRequest{})).status ==
          Status::invalid_request);
    CHECK(as<protocol::SetAttrReply>(s->handle(protocol::SetAttrRequest{})).status ==
          Status::invalid_request);
    REQUIRE(as<protocol::CreateReply>(s->handle(create_request())).status == Status::ok);
    CHECK(as<protocol::CreateReply>(s->handle(create_request("bare.set"))).status ==
          Status::invalid_request);
    CHECK(as<protocol::OpenReply>(s->handle(open_request("bare.set"))).status ==
          Status::invalid_request);
    CHECK(f.record.requests.size() == 1);
    auto ping = s->handle(protocol::Ping{});
    CHECK(protocol::reply_status(ping) == Status::invalid_request);
}

TEST_CASE("lanes and providers are checked before the pool is touched") {
    Fixture f;
    auto s = f.session();
    CHECK(as<protocol::CreateReply>(s->handle(create_request("pool.set", 0))).status ==
          Status::bad_lanes);
    auto verbs = create_request();
    verbs.provider = protocol::ProviderPreference::verbs;
    auto refused = as<protocol::CreateReply>(s->handle(verbs));
    CHECK(refused.status == Status::provider_unsupported);
    CHECK_THAT(refused.message, Catch::Contains("verbs") && Catch::Contains("tcp, sockets"));
    CHECK_FALSE(f.part_exists("pool.0"));
    CHECK(f.record.requests.empty());

    auto tcp = create_request();
    tcp.provider = protocol::ProviderPreference::tcp;
    REQUIRE(as<protocol::CreateReply>(s->handle(tcp)).status == Status::ok);
    CHECK(f.record.requests.at(0).provider == protocol::ProviderPreference::tcp);
}

TEST_CASE("a data plane that does not start answers with the matching status and leaves no "
          "pool behind") {
    Fixture f;
    struct Case {
        int errno_value;
        Status status;
    };
    auto c = GENERATE(Case{EMEDIUMTYPE, Status::provider_unsupported},
                      Case{ENODATA, Status::bad_provider}, Case{EINVAL, Status::bad_provider},
                      Case{EADDRNOTAVAIL, Status::fatal_connection},
                      Case{EADDRINUSE, Status::fatal_connection}, Case{ENOMEM, Status::fatal});
    CAPTURE(c.errno_value);
    f.record.failure = Error(c.errno_value, "starting the data plane failed", ErrorSource::fabric);

    auto s = f.session();
    auto created = as<protocol::CreateReply>(s->handle(create_request()));
    CHECK(created.status == c.status);
    CHECK_THAT(created.message, Catch::Contains("starting the data plane failed"));
    if (c.errno_value == EMEDIUMTYPE) {
        // No usable provider for a client that named one: that provider is the bad one.
        auto named = create_request();
        named.provider = protocol::ProviderPreference::sockets;
        CHECK(as<protocol::CreateReply>(s->handle(named)).status == Status::bad_provider);
    }
    CHECK_FALSE(f.part_exists("pool.0")); // the pool this session created is removed again
    CHECK(f.store->pools_in_use().empty());

    // An existing pool is only closed, and unlocked.
    f.record.failure.reset();
    REQUIRE(as<protocol::CreateReply>(s->handle(create_request())).status == Status::ok);
    REQUIRE(as<protocol::CloseReply>(s->handle(protocol::CloseRequest{})).status == Status::ok);
    f.record.failure = Error(c.errno_value, "again", ErrorSource::fabric);
    CHECK(as<protocol::OpenReply>(s->handle(open_request())).status == c.status);
    CHECK(f.part_exists("pool.0"));
    CHECK(f.store->pools_in_use().empty());
    CHECK(poolset::PoolMapping::open(
        *poolset::parse(test::pool_set_text(f.dir.path(), "pool", 2), "pool.set")));
}

TEST_CASE("no persistence method allowed and valid: refused, data plane stopped, pool removed") {
    Fixture f;
    f.config.methods = {.allow_apm = true, .allow_gpspm = false, .allow_commit = true};
    auto s = f.session();
    auto created = as<protocol::CreateReply>(s->handle(create_request()));
    CHECK(created.status == Status::provider_unsupported);
    CHECK(f.record.stops == 1);
    CHECK(f.record.locked_at_stop == std::vector<bool>{true});
    CHECK_FALSE(f.part_exists("pool.0"));
}

TEST_CASE("the client's method preference is honoured where valid") {
    Fixture f;
    auto s = f.session();
    auto request = create_request();
    SECTION("APM on a software provider without eADR is never chosen") {
        request.persist_method = protocol::PersistMethod::apm;
        auto created = as<protocol::CreateReply>(s->handle(request));
        REQUIRE(created.status == Status::ok);
        CHECK(created.data_path.persist_method == protocol::PersistMethod::gpspm);
    }
    SECTION("GPSPM asked for") {
        request.persist_method = protocol::PersistMethod::gpspm;
        auto created = as<protocol::CreateReply>(s->handle(request));
        REQUIRE(created.status == Status::ok);
        CHECK(created.data_path.persist_method == protocol::PersistMethod::gpspm);
    }
}

TEST_CASE("a lost channel fences the data plane, then unlocks the pool and keeps it") {
    Fixture f;
    auto s = f.session();
    REQUIRE(as<protocol::CreateReply>(s->handle(create_request())).status == Status::ok);
    auto other = f.session("bob");
    CHECK(as<protocol::OpenReply>(other->handle(open_request())).status == Status::busy);

    s->on_close(Error(ECONNRESET, "connection closed by the peer"));
    CHECK(f.record.stops == 1);
    CHECK(f.record.locked_at_stop == std::vector<bool>{true});
    CHECK(f.part_exists("pool.0")); // a replica is never dropped because its client went away
    CHECK(as<protocol::OpenReply>(other->handle(open_request())).status == Status::ok);

    // Destroying a session that still has a pool releases it the same way.
    other.reset();
    CHECK(f.record.stops == 2);
    CHECK(f.record.locked_at_stop == std::vector<bool>{true, true});
    CHECK(f.store->pools_in_use().empty());
}

TEST_CASE("close removes the pool only when this session created it") {
    Fixture f;
    auto s = f.session();
    REQUIRE(as<protocol::CreateReply>(s->handle(create_request())).status == Status::ok);
    REQUIRE(as<protocol::CloseReply>(s->handle(protocol::CloseRequest{false})).status ==
            Status::ok);
    REQUIRE(as<protocol::OpenReply>(s->handle(open_request())).status == Status::ok);
    auto kept = as<protocol::CloseReply>(s->handle(protocol::CloseRequest{true}));
    CHECK(kept.status == Status::ok);
    CHECK_THAT(kept.message, Catch::Contains("not removed"));
    CHECK(f.part_exists("pool.0"));
    REQUIRE(as<protocol::RemoveReply>(s->handle(protocol::RemoveRequest{"pool.set", false, false}))
                .status == Status::ok);

    REQUIRE(as<protocol::CreateReply>(s->handle(create_request())).status == Status::ok);
    CHECK(as<protocol::CloseReply>(s->handle(protocol::CloseRequest{true})).status == Status::ok);
    CHECK_FALSE(f.part_exists("pool.0"));
    CHECK_FALSE(f.part_exists("pool.1"));
}

TEST_CASE("set_attr, remove and status through a session") {
    Fixture f;
    auto s = f.session();
    REQUIRE(as<protocol::CreateReply>(s->handle(create_request())).status == Status::ok);
    PoolAttributes changed = test::pmemobj_attributes();
    changed.next_uuid[3] = 0x99;
    CHECK(as<protocol::SetAttrReply>(s->handle(protocol::SetAttrRequest{changed})).status ==
          Status::ok);

    auto status = as<protocol::StatusReply>(s->handle(protocol::StatusRequest{}));
    CHECK(status.status == Status::ok);
    CHECK(status.sessions == 3);
    CHECK(status.pools_in_use == 1);
    REQUIRE(status.session_list.size() == 1);
    CHECK(status.session_list[0].pool_set == "pool.set");
    CHECK(status.protocol_version == protocol::kProtocolVersion);

    auto other = f.session("bob");
    CHECK(as<protocol::RemoveReply>(other->handle(protocol::RemoveRequest{"pool.set", true, false}))
              .status == Status::busy);
    CHECK(as<protocol::RemoveReply>(
              other->handle(protocol::RemoveRequest{"../pool.set", true, false}))
              .status == Status::bad_name);
    REQUIRE(as<protocol::CloseReply>(s->handle(protocol::CloseRequest{})).status == Status::ok);

    auto opened = as<protocol::OpenReply>(other->handle(open_request()));
    REQUIRE(opened.status == Status::ok);
    CHECK(opened.attributes == changed);
    REQUIRE(as<protocol::CloseReply>(other->handle(protocol::CloseRequest{})).status == Status::ok);
    CHECK(as<protocol::RemoveReply>(other->handle(protocol::RemoveRequest{"pool.set", false, true}))
              .status == Status::ok);
    CHECK_FALSE(f.part_exists("pool.0"));
    CHECK_FALSE(f.part_exists("sets/pool.set"));
}

TEST_CASE("a pool without headers gets no protected prefix and keeps zero attributes") {
    Fixture f;
    auto s = f.session();
    auto request = create_request("bare.set");
    request.attributes = {};
    REQUIRE(as<protocol::CreateReply>(s->handle(request)).status == Status::ok);
    CHECK(f.record.requests.at(0).protected_prefix == 0);
    CHECK(
        as<protocol::SetAttrReply>(s->handle(protocol::SetAttrRequest{test::pmemobj_attributes()}))
            .status == Status::not_supported);
    // Digests cover it from its first byte.
    auto digests = as<protocol::DigestReply>(s->handle(protocol::DigestRequest{0, 2 << 20, 4096}));
    REQUIRE(digests.status == Status::ok);
    CHECK(digests.digests.size() == 512);
}

TEST_CASE("digests of the open pool: its data only, within the pool, in bounded requests") {
    Fixture f;
    auto s = f.session();
    auto refused = as<protocol::DigestReply>(s->handle(protocol::DigestRequest{4096, 4096, 4096}));
    CHECK(refused.status == Status::invalid_request);
    CHECK(refused.message == "this session has no pool open");

    REQUIRE(as<protocol::CreateReply>(s->handle(create_request())).status == Status::ok);
    const std::uint64_t pool_size = (4u << 20) - 4096; // two 2 MiB parts, one header each

    // A new pool is zero beyond its headers; the last extent is short.
    auto reply = as<protocol::DigestReply>(
        s->handle(protocol::DigestRequest{4096, pool_size - 4096, 1 << 20}));
    REQUIRE(reply.status == Status::ok);
    REQUIRE(reply.digests.size() == 4);
    const std::vector<std::byte> zeros(1 << 20);
    const auto zero_digest = protocol::extent_digests(zeros, 1 << 20).at(0);
    CHECK(reply.digests[0] == zero_digest);
    CHECK(reply.digests[2] == zero_digest);
    CHECK(reply.digests[3] ==
          protocol::extent_digests(std::span(zeros).first(pool_size - 4096 - (3u << 20)), 1 << 20)
              .at(0));

    // The data the client wrote is what is hashed: write through a second mapping of the parts
    // (as the data path's worker does) and the digest of that extent alone changes.
    {
        std::fstream part(f.dir / "pool.0", std::ios::in | std::ios::out | std::ios::binary);
        part.seekp((1 << 20) + 5);
        part.put('x');
    }
    auto changed = as<protocol::DigestReply>(
        s->handle(protocol::DigestRequest{4096, pool_size - 4096, 1 << 20}));
    REQUIRE(changed.status == Status::ok);
    CHECK(changed.digests[0] != reply.digests[0]);
    CHECK(changed.digests[1] == reply.digests[1]);

    struct Case {
        protocol::DigestRequest request;
        std::string message;
    };
    auto c = GENERATE_COPY(
        Case{{0, 8192, 4096},
             "offset: 0 is inside the pool header (the first 4096 bytes), which replication does "
             "not write"},
        Case{{4095, 8192, 4096}, "offset: 4095 is inside the pool header"},
        Case{{pool_size, 4096, 4096}, "offset: 4190208 is beyond the pool of 4190208 bytes"},
        Case{{pool_size - 4096, 8192, 4096},
             "length: [4186112, +8192) ends beyond the pool of 4190208 bytes"},
        Case{{4096, 4096, 1000}, "extent_size: 1000 is not a power of two from 4096 to 67108864"},
        Case{{4096, 1ULL << 31, 1 << 20}, "length: 2147483648 bytes exceed"});
    CAPTURE(c.request.offset, c.request.length, c.request.extent_size);
    auto bad = as<protocol::DigestReply>(s->handle(c.request));
    CHECK(bad.status == Status::invalid_request);
    CHECK_THAT(bad.message, Catch::StartsWith(c.message));
    CHECK(bad.digests.empty());
}

TEST_CASE("status lists the asker's sessions, or every identity's for an admin client") {
    Fixture f;
    f.config.admin_clients = {"root-operator"};
    auto alice = f.session("alice");
    auto bob = f.session("bob");
    REQUIRE(as<protocol::CreateReply>(alice->handle(create_request())).status == Status::ok);

    auto mine = as<protocol::StatusReply>(bob->handle(protocol::StatusRequest{}));
    CHECK_FALSE(mine.all_identities);
    REQUIRE(mine.visible_sessions == 1);
    REQUIRE(mine.session_list.size() == 1);
    CHECK(mine.session_list[0].identity == "bob");
    CHECK(mine.session_list[0].pool_set.empty());
    CHECK(mine.max_sessions == f.config.max_sessions);

    auto admin = f.session("root-operator");
    auto all = as<protocol::StatusReply>(admin->handle(protocol::StatusRequest{}));
    CHECK(all.all_identities);
    REQUIRE(all.visible_sessions == 3);
    REQUIRE(all.session_list.size() == 3);
    const protocol::SessionStatus& first = all.session_list[0];
    CHECK(first.identity == "alice");
    CHECK(first.peer == "127.0.0.1:40000");
    CHECK(first.pool_set == "pool.set");
    CHECK(first.state == protocol::ReplicaState::inconsistent);
    CHECK(first.generation == 1);
    CHECK(first.lanes == 4);
    CHECK(first.persist_method != protocol::PersistMethod::any);
    CHECK_FALSE(first.method_reason.empty());

    // Pages: the second one starts where asked and ends with the list.
    auto page = as<protocol::StatusReply>(admin->handle(protocol::StatusRequest{2}));
    CHECK(page.first_session == 2);
    REQUIRE(page.session_list.size() == 1);
    CHECK(page.session_list[0].identity == "root-operator");
    auto beyond = as<protocol::StatusReply>(admin->handle(protocol::StatusRequest{99}));
    CHECK(beyond.session_list.empty());
    CHECK(beyond.first_session == 3);
}

TEST_CASE("sessions record their events: opened, state changes, closed, lost, refused, resync") {
    Fixture f;
    auto kinds_of = [&](std::string_view identity) {
        std::vector<protocol::EventKind> kinds;
        for (const auto& event : f.events.after(0, 64).events)
            if (event.identity == identity)
                kinds.push_back(event.kind);
        return kinds;
    };
    {
        auto alice = f.session("alice");
        REQUIRE(as<protocol::CreateReply>(alice->handle(create_request())).status == Status::ok);
        CHECK(as<protocol::ResyncReportReply>(
                  alice->handle(protocol::ResyncReport{protocol::ResyncPhase::started, 0, 8192}))
                  .status == Status::ok);
        auto during = as<protocol::StatusReply>(alice->handle(protocol::StatusRequest{}));
        REQUIRE(during.session_list.size() == 1);
        CHECK(during.session_list[0].resync_active);
        CHECK(during.session_list[0].resync_total_bytes == 8192);
        alice->handle(protocol::ResyncReport{protocol::ResyncPhase::finished, 8192, 8192});
        REQUIRE(
            as<protocol::CloseReply>(alice->handle(protocol::CloseRequest{false, true})).status ==
            Status::ok);
        alice->on_close(Error(ECONNRESET, "the client hung up"));
    }
    using K = protocol::EventKind;
    CHECK(kinds_of("alice") == std::vector<K>{K::session_opened, K::state_changed,
                                              K::resync_started, K::resync_finished,
                                              K::state_changed, K::session_closed});
    auto alice_events = f.events.after(0, 64).events;
    CHECK(alice_events[1].state == protocol::ReplicaState::inconsistent);
    CHECK(alice_events[1].reason == "created");
    CHECK(alice_events[4].has_state);
    CHECK(alice_events[4].state == protocol::ReplicaState::consistent);
    CHECK(alice_events[4].pool_set == "pool.set");

    {
        auto bob = f.session("bob");
        REQUIRE(as<protocol::OpenReply>(bob->handle(open_request())).status == Status::ok);
        auto refused = as<protocol::OpenReply>(bob->handle(open_request("missing.set")));
        CHECK(refused.status != Status::ok);
        bob->on_close(Error(ETIMEDOUT, "no heartbeat"));
    }
    CHECK(kinds_of("bob") == std::vector<K>{K::session_opened, K::state_changed, K::refused,
                                            K::session_lost, K::state_changed});
    auto last = f.events.after(0, 64).events.back();
    CHECK(last.state == protocol::ReplicaState::inconsistent);
    // Bob found the replica consistent and replicated synchronously until the loss.
    CHECK(last.reason == "the session ended uncleanly while in sync");
    // A resync report needs a pool.
    auto carol = f.session("carol");
    CHECK(as<protocol::ResyncReportReply>(carol->handle(protocol::ResyncReport{})).status ==
          Status::invalid_request);
}

TEST_CASE("a session whose resync finished is in sync from then on: its loss leaves the copy "
          "promotable") {
    Fixture f;
    auto loss_reason = [&] { return f.events.after(0, 64).events.back().reason; };
    auto resync = [](DaemonSession& s, protocol::ResyncPhase phase, std::uint64_t done) {
        CHECK(as<protocol::ResyncReportReply>(s.handle(protocol::ResyncReport{phase, done, 8192}))
                  .status == Status::ok);
    };
    {
        // Created, so in sync, until a resync starts: the copy is behind then.
        auto alice = f.session("alice");
        REQUIRE(as<protocol::CreateReply>(alice->handle(create_request())).status == Status::ok);
        resync(*alice, protocol::ResyncPhase::started, 0);
        alice->on_close(Error(ETIMEDOUT, "no heartbeat"));
    }
    CHECK(loss_reason() == "the session ended uncleanly");
    {
        // Found inconsistent; a resync that ends short of its total does not make it in sync.
        auto bob = f.session("bob");
        REQUIRE(as<protocol::OpenReply>(bob->handle(open_request())).status == Status::ok);
        resync(*bob, protocol::ResyncPhase::started, 0);
        resync(*bob, protocol::ResyncPhase::finished, 4096);
        bob->on_close(Error(ETIMEDOUT, "no heartbeat"));
    }
    CHECK(loss_reason() == "the session ended uncleanly");
    {
        // The initiator copied all it lacked (as libpmemobj's open of an outdated replica does):
        // persists are synchronous from then on, as after opening a consistent replica.
        auto carol = f.session("carol");
        REQUIRE(as<protocol::OpenReply>(carol->handle(open_request())).status == Status::ok);
        resync(*carol, protocol::ResyncPhase::started, 0);
        resync(*carol, protocol::ResyncPhase::progress, 4096);
        resync(*carol, protocol::ResyncPhase::finished, 8192);
        carol->on_close(Error(ETIMEDOUT, "no heartbeat"));
    }
    CHECK(loss_reason() == "the session ended uncleanly while in sync");
    {
        // A failed resync leaves the copy behind again.
        auto dave = f.session("dave");
        REQUIRE(as<protocol::OpenReply>(dave->handle(open_request())).status == Status::ok);
        resync(*dave, protocol::ResyncPhase::finished, 8192);
        resync(*dave, protocol::ResyncPhase::failed, 0);
        dave->on_close(Error(ETIMEDOUT, "no heartbeat"));
    }
    CHECK(loss_reason() == "the session ended uncleanly");
}

TEST_CASE("promote is for admin clients; it ends the session that has the set, records the "
          "state change, and the set is then refused as a replica") {
    Fixture f;
    f.config.admin_clients = {"root-operator"};
    auto alice = f.session("alice");
    std::thread channel_end; // what the channel does when asked to end: on_close, elsewhere
    alice->on_open(
        [&](Error reason) { channel_end = std::thread([&, reason] { alice->on_close(reason); }); });
    REQUIRE(as<protocol::CreateReply>(alice->handle(create_request())).status == Status::ok);

    auto bob = f.session("bob");
    auto refused = as<protocol::PromoteReply>(bob->handle(protocol::PromoteRequest{"pool.set"}));
    CHECK(refused.status == Status::not_permitted);

    auto admin = f.session("root-operator");
    auto promoted =
        as<protocol::PromoteReply>(admin->handle(protocol::PromoteRequest{"pool.set", false}));
    if (channel_end.joinable())
        channel_end.join();
    INFO(promoted.message);
    REQUIRE(promoted.status == Status::ok);
    CHECK(promoted.sessions_ended == 1);
    CHECK(promoted.previous_state == protocol::ReplicaState::inconsistent); // lost in sync
    CHECK(promoted.generation == promoted.previous_generation + 1);
    auto last = f.events.after(0, 64).events.back();
    CHECK(last.kind == protocol::EventKind::state_changed);
    CHECK(last.state == protocol::ReplicaState::promoted);
    CHECK(last.reason.find("the session that had it was ended") != std::string::npos);

    auto again = f.session("alice");
    auto reopened = as<protocol::OpenReply>(again->handle(open_request()));
    CHECK(reopened.status == Status::split_brain);
}
