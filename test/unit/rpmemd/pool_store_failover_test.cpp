// SPDX-License-Identifier: BSD-3-Clause
// PoolStore's failover operations on real files: promote (refusals, fencing a session through
// the registry, the record and the self-linked headers), demote of an unused promote and its
// refusal after a change, rejoin and attach_replica (the links of a pair), and the state file
// text of the new fields.
#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "pool_fixtures.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "poolset/pool_mapping.h"
#include "rpmemd/supervisor/pool_store.h"
#include "rpmemd/supervisor/replica_state_file.h"
#include "rpmemd/supervisor/status_error.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;
using protocol::ReplicaState;
using protocol::Status;
using test::TempDir;
using namespace std::chrono_literals;

namespace {

template <typename T>
Status status_of_failure(const Result<T>& result) {
    REQUIRE_FALSE(result);
    INFO(result.error().message());
    return reply_status_for(result.error());
}

struct Fixture {
    TempDir dir;
    PoolStore store{(dir.path() / "sets").string(), {}, default_resolve_method()};
    PoolAttributes attributes = test::pmemobj_attributes();

    Fixture() { dir.write("sets/a.set", test::pool_set_text(dir.path(), "a", 2)); }

    // Creates the pool and closes it with `verdict`.
    void create(CloseVerdict verdict) {
        auto pool = store.create({"alice", "a.set", 0, 1}, attributes);
        REQUIRE(pool);
        (*pool)->mapping().data()[8192] = 0x5a; // some data
        REQUIRE(store.close(std::move(*pool), false, verdict));
    }

    ReplicaRecord record() {
        auto found = store.replica_record("alice", "a.set");
        REQUIRE(found);
        REQUIRE(found->has_value());
        return **found;
    }
};

} // namespace

TEST_CASE("state file text keeps lost-in-sync and a promotion's undo") {
    ReplicaRecord record{ReplicaState::promoted, 7};
    record.undo = PromotionUndo{ReplicaState::consistent, 6, {}, {}, 0xfeedULL};
    record.undo->prev_replica.fill(0xab);
    record.undo->next_replica.fill(0xcd);
    auto parsed = parse_replica_record(format_replica_record(record), "f");
    REQUIRE(parsed);
    CHECK(*parsed == record);

    ReplicaRecord lost{ReplicaState::inconsistent, 2};
    lost.lost_in_sync = true;
    auto reparsed = parse_replica_record(format_replica_record(lost), "f");
    REQUIRE(reparsed);
    CHECK(*reparsed == lost);

    CHECK_FALSE(
        parse_replica_record("state = promoted\ngeneration = 2\nundo-generation = 1\n", "f"));
    CHECK_FALSE(
        parse_replica_record("state = inconsistent\ngeneration = 2\nlost-in-sync = maybe\n", "f"));
}

TEST_CASE("promote refuses a replica that is not up to date unless forced") {
    Fixture f;
    f.create(CloseVerdict::behind); // outdated
    auto refused = f.store.promote("alice", "a.set", false, 1s);
    CHECK(status_of_failure(refused) == Status::invalid_request);
    CHECK(refused.error().message().find("--force") != std::string::npos);
    CHECK(f.record().state == ReplicaState::outdated);

    auto forced = f.store.promote("alice", "a.set", true, 1s);
    REQUIRE(forced);
    CHECK(forced->loss_note.find("outdated") != std::string::npos);
    CHECK(forced->after.state == ReplicaState::promoted);
    CHECK(forced->after.generation == 2);
}

TEST_CASE("promote of a consistent replica: generation, record, self-linked headers; open is "
          "split brain; a repeat is harmless; demote undoes it") {
    Fixture f;
    f.create(CloseVerdict::in_sync);
    auto promoted = f.store.promote("alice", "a.set", false, 1s);
    REQUIRE(promoted);
    CHECK_FALSE(promoted->session_ended);
    CHECK(promoted->before.state == ReplicaState::consistent);
    CHECK(promoted->after.generation == 2);
    const ReplicaRecord record = f.record();
    CHECK(record.state == ReplicaState::promoted);
    REQUIRE(record.undo);
    CHECK(record.undo->prev_replica == f.attributes.prev_uuid);
    CHECK(record.undo->next_replica == f.attributes.next_uuid);

    auto identity = f.store.attach_replica("alice", "a.set", {});
    REQUIRE(identity);
    CHECK(identity->replica_uuid == identity->own_uuid); // linked to itself
    CHECK(identity->own_uuid == f.attributes.uuid);

    CHECK(status_of_failure(f.store.open({"alice", "a.set", 0, 2})) == Status::split_brain);
    auto again = f.store.promote("alice", "a.set", false, 1s);
    REQUIRE(again);
    CHECK(again->already);
    CHECK(f.record().generation == 2);

    CHECK(status_of_failure(f.store.demote("alice", "a.set", 5)) == Status::split_brain);
    auto demoted = f.store.demote("alice", "a.set", 2);
    REQUIRE(demoted);
    CHECK(demoted->state == ReplicaState::consistent);
    CHECK(demoted->generation == 1);
    auto reopened = f.store.open({"alice", "a.set", 0, 3, 1});
    REQUIRE(reopened);
    CHECK((*reopened)->attributes() == f.attributes); // the links are back
}

TEST_CASE("demote refuses a promoted pool whose data changed") {
    Fixture f;
    f.create(CloseVerdict::in_sync);
    REQUIRE(f.store.promote("alice", "a.set", false, 1s));
    {
        // What a local libpmemobj does to a pool it opens: it writes.
        auto text = test::pool_set_text(f.dir.path(), "a", 2);
        auto parsed = poolset::parse(text, "a.set");
        REQUIRE(parsed);
        auto mapping = poolset::PoolMapping::open(*parsed);
        REQUIRE(mapping);
        mapping->data()[10000] ^= 1;
    }
    auto refused = f.store.demote("alice", "a.set", 0);
    CHECK(status_of_failure(refused) == Status::invalid_request);
    CHECK(refused.error().message().find("changed") != std::string::npos);
    CHECK(f.record().state == ReplicaState::promoted);
}

TEST_CASE("promote fences the session that has the set open") {
    Fixture f;
    f.create(CloseVerdict::in_sync);
    std::unique_ptr<OpenPool> held;
    std::atomic<bool> evicted{false};
    PoolRequest request{"alice", "a.set", 0, 9, 0, {}};
    request.evict = [&] { evicted = true; };
    auto opened = f.store.open(request);
    REQUIRE(opened);
    held = std::move(*opened);
    // The session lets go once asked, as a DaemonSession does from its strand: its data plane
    // stops, then the pool closes (lost while in sync).
    std::thread session([&] {
        while (!evicted)
            std::this_thread::sleep_for(1ms);
        REQUIRE(f.store.close(std::move(held), false, CloseVerdict::lost_in_sync));
    });
    auto promoted = f.store.promote("alice", "a.set", false, 5s);
    session.join();
    REQUIRE(promoted);
    CHECK(promoted->session_ended);
    CHECK(promoted->before.lost_in_sync);
    CHECK(promoted->after.generation == 2);
}

TEST_CASE("a session that does not let go fails the promote as busy") {
    Fixture f;
    f.create(CloseVerdict::in_sync);
    PoolRequest request{"alice", "a.set", 0, 9, 0, {}};
    request.evict = [] {};
    auto opened = f.store.open(request);
    REQUIRE(opened);
    CHECK(status_of_failure(f.store.promote("alice", "a.set", false, 100ms)) == Status::busy);
    REQUIRE(f.store.close(std::move(*opened), false, CloseVerdict::in_sync));
}

TEST_CASE("rejoin and attach_replica link a pair again") {
    Fixture f;
    // "b" plays the old primary: the same pool set UUID, linked to a's part 0.
    f.dir.write("sets/b.set", test::pool_set_text(f.dir.path(), "b", 2));
    PoolAttributes old_primary = f.attributes;
    old_primary.uuid.fill(0x77);
    old_primary.next_uuid = f.attributes.uuid;
    old_primary.prev_uuid = f.attributes.uuid;
    auto b = f.store.create({"alice", "b.set", 0, 1}, old_primary);
    REQUIRE(b);
    REQUIRE(f.store.close(std::move(*b), false, CloseVerdict::in_sync));
    f.create(CloseVerdict::in_sync);

    // Rejoining needs a promoted primary's identity; the wrong pool set is refused.
    PoolAttributes::Uuid other{};
    other.fill(0x99);
    CHECK(status_of_failure(f.store.rejoin("alice", "b.set", 2, other, f.attributes.uuid)) ==
          Status::pool_config);
    CHECK(status_of_failure(f.store.rejoin("alice", "b.set", 2, f.attributes.poolset_uuid,
                                           other)) == Status::pool_config);
    CHECK(status_of_failure(f.store.attach_replica("alice", "a.set", old_primary.uuid)) ==
          Status::invalid_request); // not promoted

    REQUIRE(f.store.promote("alice", "a.set", false, 1s));
    auto joined = f.store.rejoin("alice", "b.set", 2, f.attributes.poolset_uuid, f.attributes.uuid);
    REQUIRE(joined);
    CHECK(*joined == old_primary.uuid);
    auto b_record = f.store.replica_record("alice", "b.set");
    REQUIRE(b_record);
    CHECK(**b_record == ReplicaRecord{ReplicaState::outdated, 2});

    auto linked = f.store.attach_replica("alice", "a.set", *joined);
    REQUIRE(linked);
    CHECK(linked->replica_uuid == old_primary.uuid);
    CHECK(linked->record.state == ReplicaState::promoted);
}
