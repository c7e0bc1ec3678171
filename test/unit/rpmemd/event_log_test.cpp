// SPDX-License-Identifier: BSD-3-Clause
// rpmemd's event log: numbering, time stamps, the capacity, filtering and the totals.
#include <catch2/catch.hpp>

#include "rpmemd/supervisor/event_log.h"

using namespace rpmem;
using namespace rpmem::daemon;
using protocol::EventKind;

namespace {

protocol::DaemonEvent event(EventKind kind, std::string identity = "alice") {
    protocol::DaemonEvent e;
    e.kind = kind;
    e.identity = std::move(identity);
    return e;
}

} // namespace

TEST_CASE("events are numbered from 1 and stamped with the clock's time") {
    std::chrono::system_clock::time_point now{std::chrono::milliseconds(1'700'000'000'123)};
    EventLog log(8, [&] { return now; });
    CHECK(log.after(0, 16).events.empty());
    CHECK(log.after(0, 16).oldest_sequence == 0);
    CHECK(log.record(event(EventKind::session_opened)) == 1);
    now += std::chrono::milliseconds(5);
    CHECK(log.record(event(EventKind::session_closed)) == 2);
    auto reply = log.after(0, 16);
    REQUIRE(reply.events.size() == 2);
    CHECK(reply.events[0].sequence == 1);
    CHECK(reply.events[0].unix_time_ms == 1'700'000'000'123);
    CHECK(reply.events[1].unix_time_ms == 1'700'000'000'128);
    CHECK(reply.oldest_sequence == 1);
    CHECK(reply.newest_sequence == 2);
    CHECK(log.after(1, 16).events.size() == 1);
    CHECK(log.after(2, 16).events.empty());
    CHECK(log.after(UINT64_MAX, 16).newest_sequence == 2);
}

TEST_CASE("the log keeps the newest events; a reader sees what it missed") {
    EventLog log(4);
    for (int i = 0; i < 10; ++i)
        log.record(event(EventKind::refused, ""));
    auto reply = log.after(2, 16);
    CHECK(reply.oldest_sequence == 7);
    CHECK(reply.newest_sequence == 10);
    REQUIRE(reply.events.size() == 4);
    CHECK(reply.events.front().sequence == 7);
    // Totals outlive the events themselves.
    CHECK(log.totals()[static_cast<std::size_t>(EventKind::refused)] == 10);
}

TEST_CASE("at most `max` events a reply, only those the filter shows") {
    EventLog log(64);
    for (int i = 0; i < 20; ++i)
        log.record(event(EventKind::session_opened, i % 2 == 0 ? "alice" : "bob"));
    CHECK(log.after(0, 16).events.size() == 16);
    auto bobs = log.after(0, 16, [](const auto& e) { return e.identity == "bob"; });
    REQUIRE(bobs.events.size() == 10);
    for (const auto& e : bobs.events)
        CHECK(e.identity == "bob");
    CHECK(bobs.newest_sequence == 20);
}
