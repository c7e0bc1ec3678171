// SPDX-License-Identifier: BSD-3-Clause
// Fan-out through librpmem.so.1's C entry points, as libpmemobj drives it: two replicas of one
// local pool (the same address and size), each on an rpmemd of its own, persisted in turn with
// the same offset, length and lane. The first call posts to both; the second only waits. Checked
// here: every byte reaches both pool files; b's calls are answered by a's posts (librpmem's
// usage line counts them); a range changed between the two calls is sent again, not claimed; a
// stopped replica's call waits for its own acknowledgement and fails, although a's call posted
// its persist; RPMEM_FAN_OUT=0 posts nothing. Each case runs in a forked child, because
// librpmem reads its settings once per process.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "client/session_usage.h"
#include "librpmem.h"
#include "open_pair.h"
#include "pool_memory.h"
#include "process.h"
#include "replica_pair.h"
#include "rpmemd_instance.h"
#include "temp_dir.h"

using namespace rpmem::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kPool = kPoolSize;

struct Pair : ReplicaPair {
    Pair()
        : ReplicaPair("rpmem-fan-out") {}
};

// The persists posted by a sibling in the last usage record of `target`'s pool.set, from
// the usage file beside librpmem's log `log`; -1 if none.
long long posted_by_sibling(const fs::path& log, const std::string& target) {
    auto records = rpmem::client::read_usage_records(Pair::usage_file(log));
    if (!records)
        return -1;
    long long posted = -1;
    for (const rpmem::client::SessionUsage& record : *records)
        if (record.target == target && record.pool_set == "pool.set")
            posted = static_cast<long long>(record.posted_by_sibling);
    return posted;
}

// Writes a stamp into 64 bytes at `offset` and persists them on a, then on b (libpmemobj's
// order); what went wrong, if anything.
std::string persist_both(RPMEMpool* on_a, RPMEMpool* on_b, std::byte* pool, std::size_t offset,
                         std::uint64_t stamp) {
    for (std::size_t word = 0; word < 8; ++word)
        std::memcpy(pool + offset + word * 8, &stamp, sizeof stamp);
    if (rpmem_persist(on_a, offset, 64, 0, 0) != 0)
        return std::string("a: ") + rpmem_errormsg();
    if (rpmem_persist(on_b, offset, 64, 0, 0) != 0)
        return std::string("b: ") + rpmem_errormsg();
    return "";
}

// Stops `pids` and waits until the kernel shows each of them stopped ('T'), for at most 5 s.
bool stop_all(const std::vector<pid_t>& pids) {
    for (pid_t pid : pids)
        ::kill(pid, SIGSTOP);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    for (pid_t pid : pids) {
        for (;;) {
            const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
            const auto state = stat.rfind(") ");
            if (state != std::string::npos && stat[state + 2] == 'T')
                break;
            if (std::chrono::steady_clock::now() > deadline)
                return false;
            std::this_thread::sleep_for(1ms);
        }
    }
    return true;
}

} // namespace

TEST_CASE("fan-out: b's persists wait for a's posts, and both pool files hold every byte") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    constexpr int kRounds = 300;
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_pair(pair, log, 1500, {});
        if (!failure.empty())
            return failure;
        for (int i = 1; i <= kRounds; ++i)
            if (auto failed = persist_both(on_a, on_b, pool, (i * 4160) % (kPool - 64), i);
                !failed.empty())
                return failed;
        if (rpmem_close(on_b) != 0 || rpmem_close(on_a) != 0)
            return std::string("closing: ") + rpmem_errormsg();
        const std::string local(reinterpret_cast<const char*>(pool), kPool);
        if (read_text(pair.part_a()) != local)
            return "a's pool file differs from the local pool";
        if (read_text(pair.part_b()) != local)
            return "b's pool file differs from the local pool";
        return "";
    });
    INFO(outcome.message << "\n" << read_text(log));
    REQUIRE(outcome.status == 0);
    CHECK(posted_by_sibling(log, pair.b.target()) == kRounds);
    CHECK(posted_by_sibling(log, pair.a.target()) == 0);
}

TEST_CASE("fan-out: a range changed between the two calls is sent again, not claimed") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_pair(pair, log, 1500, {});
        if (!failure.empty())
            return failure;
        const std::uint64_t before = 0x1111111111111111, after = 0x2222222222222222;
        std::memcpy(pool + 8192, &before, 8);
        if (rpmem_persist(on_a, 8192, 64, 0, 0) != 0) // posts "before" to b
            return std::string("a: ") + rpmem_errormsg();
        std::memcpy(pool + 8192, &after, 8);
        if (rpmem_persist(on_b, 8192, 64, 0, 0) != 0) // must send "after" itself
            return std::string("b: ") + rpmem_errormsg();
        if (rpmem_close(on_b) != 0 || rpmem_close(on_a) != 0)
            return std::string("closing: ") + rpmem_errormsg();
        std::uint64_t on_a_file = 0;
        std::uint64_t on_b_file = 0;
        std::memcpy(&on_a_file, read_text(pair.part_a()).data() + 8192, 8);
        std::memcpy(&on_b_file, read_text(pair.part_b()).data() + 8192, 8);
        // (b's own persist, being first then, posted "after" to a as well.)
        if (on_a_file != after)
            return "a's file does not hold the last bytes";
        if (on_b_file != after)
            return "b's call returned 0 but its file holds the bytes of a's call";
        return "";
    });
    INFO(outcome.message << "\n" << read_text(log));
    REQUIRE(outcome.status == 0);
    CHECK(posted_by_sibling(log, pair.b.target()) == 0);
}

TEST_CASE("fan-out: a stopped replica's call waits for its own acknowledgement and fails") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_pair(pair, log, 1500, {});
        if (!failure.empty())
            return failure;
        if (auto failed = persist_both(on_a, on_b, pool, 4096, 1); !failed.empty())
            return failed;
        const std::vector<pid_t> daemon = process_and_children(pair.b.process().pid());
        if (daemon.size() < 2)
            return "b's worker process was not found";
        if (!stop_all(daemon))
            return "b's processes did not stop";
        const std::uint64_t stamp = 2;
        std::memcpy(pool + 4096, &stamp, 8);
        if (rpmem_persist(on_a, 4096, 64, 0, 0) != 0) // posted to b as well
            return std::string("a: ") + rpmem_errormsg();
        const auto began = std::chrono::steady_clock::now();
        const int on_b_result = rpmem_persist(on_b, 4096, 64, 0, 0);
        const auto took = std::chrono::steady_clock::now() - began;
        for (pid_t pid : process_and_children(pair.b.process().pid()))
            ::kill(pid, SIGCONT);
        if (on_b_result == 0)
            return "b's persist returned 0 while its rpmemd was stopped";
        if (took < 1000ms)
            return "b's persist failed before waiting out RPMEM_TIMEOUT: " +
                   std::string(rpmem_errormsg());
        if (rpmem_persist(on_b, 4096, 64, 0, 0) == 0)
            return "b's error is not sticky";
        if (rpmem_persist(on_a, 4096, 64, 0, 0) != 0)
            return std::string("a after b failed: ") + rpmem_errormsg();
        rpmem_close(on_b);
        return rpmem_close(on_a) == 0 ? "" : std::string("closing a: ") + rpmem_errormsg();
    });
    // The child stops and continues b's processes itself; continue them here too, in case it
    // died in between.
    for (pid_t pid : process_and_children(pair.b.process().pid()))
        ::kill(pid, SIGCONT);
    INFO(outcome.message << "\n" << read_text(log));
    CHECK(outcome.status == 0);
}

TEST_CASE("fan-out off (RPMEM_FAN_OUT=0): every call persists on its own") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_pair(pair, log, 1500, {{"RPMEM_FAN_OUT", "0"}});
        if (!failure.empty())
            return failure;
        for (int i = 1; i <= 20; ++i)
            if (auto failed = persist_both(on_a, on_b, pool, 4096 + i * 64, i); !failed.empty())
                return failed;
        if (rpmem_close(on_b) != 0 || rpmem_close(on_a) != 0)
            return std::string("closing: ") + rpmem_errormsg();
        return read_text(pair.part_b()) == std::string(reinterpret_cast<const char*>(pool), kPool)
                   ? ""
                   : "b's pool file differs from the local pool";
    });
    INFO(outcome.message << "\n" << read_text(log));
    REQUIRE(outcome.status == 0);
    CHECK(posted_by_sibling(log, pair.b.target()) == 0);
}

TEST_CASE("fan-out: a's calls never wait on b, stopped and never drained by its own calls") {
    Pair pair;
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_pair(pair, log, 1500, {});
        if (!failure.empty())
            return failure;
        const std::vector<pid_t> daemon = process_and_children(pair.b.process().pid());
        if (!stop_all(daemon))
            return "b's processes did not stop";
        // Each of a's persists posts to b until b's lane has no credit left; none may wait for
        // b (RPMEM_TIMEOUT is 1.5 s).
        const auto began = std::chrono::steady_clock::now();
        std::string failed;
        for (int i = 1; i <= 50 && failed.empty(); ++i) {
            std::memset(pool + 4096 + i * 64, i, 64);
            if (rpmem_persist(on_a, 4096 + i * 64, 64, 0, 0) != 0)
                failed = std::string("a: ") + rpmem_errormsg();
        }
        const auto took = std::chrono::steady_clock::now() - began;
        for (pid_t pid : daemon)
            ::kill(pid, SIGCONT);
        if (!failed.empty())
            return failed;
        if (took >= 1000ms)
            return "a's persists waited for the stopped b";
        rpmem_close(on_b);
        return rpmem_close(on_a) == 0 ? "" : std::string("closing a: ") + rpmem_errormsg();
    });
    for (pid_t pid : process_and_children(pair.b.process().pid()))
        ::kill(pid, SIGCONT);
    INFO(outcome.message << "\n" << read_text(log));
    CHECK(outcome.status == 0);
}

TEST_CASE("fan-out: two replicas a reply delay away cost one round trip, not two") {
    // inject-reply-delay in each rpmemd's worker: every reply leaves 500 ms after its request
    // was served. A persist to both takes at least that (the delay holds), and well under
    // twice that when the fan-out overlaps the two round trips (serial calls would take 1 s).
    constexpr auto kDelay = 500ms;
    ReplicaPair pair("rpmem-fan-out-delay", {"inject-reply-delay = 500ms"});
    const auto log = pair.root_a / "client.log";
    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        auto [pool, on_a, on_b, failure] = open_pair(pair, log, 5000, {});
        if (!failure.empty())
            return failure;
        auto fastest = std::chrono::steady_clock::duration::max();
        for (int i = 1; i <= 3; ++i) {
            const auto start = std::chrono::steady_clock::now();
            if (auto failed = persist_both(on_a, on_b, pool, 4096 * static_cast<std::size_t>(i), i);
                !failed.empty())
                return failed;
            const auto took = std::chrono::steady_clock::now() - start;
            if (took < kDelay)
                return "a persist to both came back before the reply delay was over";
            fastest = std::min(fastest, took);
        }
        if (fastest >= 2 * kDelay)
            return "every persist to both took two reply delays or more: the fan-out did not "
                   "overlap them (" +
                   std::to_string(
                       std::chrono::duration_cast<std::chrono::milliseconds>(fastest).count()) +
                   " ms at best)";
        if (rpmem_close(on_b) != 0 || rpmem_close(on_a) != 0)
            return std::string("closing: ") + rpmem_errormsg();
        const std::string local(reinterpret_cast<const char*>(pool), kPool);
        if (read_text(pair.part_a()) != local || read_text(pair.part_b()) != local)
            return "a replica's pool file differs from the local pool";
        return "";
    });
    INFO(outcome.message << "\n" << read_text(log));
    REQUIRE(outcome.status == 0);
    CHECK(posted_by_sibling(log, pair.b.target()) == 3);
}
