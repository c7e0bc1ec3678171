// SPDX-License-Identifier: BSD-3-Clause
// on-replica-failure = continue through librpmem.so.1's C entry points: the data plane of a
// session is killed under two writer threads; every persist still returns 0, the replica goes
// degraded, reconnects, copies what it missed while the writers go on, and comes back in sync.
// After close the target's pool file equals the local pool byte for byte and rpmemd records
// the replica consistent. Three rounds, each with a fresh kill.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "librpmem.h"
#include "pool_memory.h"
#include "target_host.h"
#include "temp_dir.h"

using rpmem::test::apply_environment;
using rpmem::test::kPoolSize;
using rpmem::test::pool_memory;
using rpmem::test::read_text;
using rpmem::test::TargetHost;
using namespace std::chrono_literals;

namespace {

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t count = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++count;
    return count;
}

// Waits until the client log has `needle` `times` times.
bool wait_for_client_log(const std::string& path, const std::string& needle, std::size_t times) {
    const auto deadline = std::chrono::steady_clock::now() + rpmem::test::kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
        if (count_of(read_text(path), needle) >= times)
            return true;
        std::this_thread::sleep_for(20ms);
    }
    return false;
}

// Writes stamped 8-byte words at random offsets of its own half of the pool (two threads never
// write the same bytes, so the last persist of each word is well defined) and persists each
// write's 64-byte block on its own lane.
struct Writer {
    unsigned lane = 0;
    std::byte* pool = nullptr;
    RPMEMpool* rpp = nullptr;
    std::atomic<bool>* stop = nullptr;
    std::atomic<std::uint64_t> persisted{0};
    std::atomic<int> failures{0};
    std::string first_failure;

    void run() {
        std::mt19937_64 random(lane + 1);
        const std::size_t half = kPoolSize / 2;
        std::uint64_t stamp = 0;
        while (!stop->load()) {
            const std::size_t block = (random() % (half / 64)) * 64 + lane * half;
            const std::size_t word = block + (random() % 8) * 8;
            const std::uint64_t value = (std::uint64_t{lane} << 56) | ++stamp;
            std::memcpy(pool + word, &value, sizeof value);
            if (rpmem_persist(rpp, block, 64, lane, 0) != 0) {
                if (failures.fetch_add(1) == 0)
                    first_failure = rpmem_errormsg();
            } else {
                persisted.fetch_add(1);
            }
        }
    }
};

} // namespace

TEST_CASE("continue: a lost data plane degrades, resyncs under writes, ends byte-equal") {
    TargetHost host;
    apply_environment(host.client_environment());
    const std::string client_log = host.dir() / "client.log";
    ::setenv("RPMEM_ON_REPLICA_FAILURE", "continue", 1);
    ::setenv("RPMEM_TIMEOUT", "3000", 1);
    ::setenv("RPMEM_LOG_LEVEL", "info", 1);
    ::setenv("RPMEM_LOG_FILE", client_log.c_str(), 1);
    host.write_set("degraded.set", "degraded", 1, "NOHDRS");

    auto memory = pool_memory();
    auto* pool = memory.data();
    unsigned lanes = 2;
    RPMEMpool* rpp =
        rpmem_create(host.target().c_str(), "degraded.set", pool, kPoolSize, &lanes, nullptr);
    INFO(rpmem_errormsg());
    REQUIRE(rpp != nullptr);
    REQUIRE(lanes == 2);

    std::atomic<bool> stop{false};
    std::vector<std::unique_ptr<Writer>> writers;
    std::vector<std::thread> threads;
    for (unsigned lane = 0; lane < 2; ++lane) {
        auto writer = std::make_unique<Writer>();
        writer->lane = lane;
        writer->pool = pool;
        writer->rpp = rpp;
        writer->stop = &stop;
        writers.push_back(std::move(writer));
        threads.emplace_back([w = writers.back().get()] { w->run(); });
    }
    auto persisted = [&] { return writers[0]->persisted.load() + writers[1]->persisted.load(); };

    for (std::size_t round = 1; round <= 3; ++round) {
        INFO("round " << round);
        const auto before = persisted();
        while (persisted() < before + 300)
            std::this_thread::sleep_for(1ms);
        const pid_t worker = host.last_worker_pid();
        REQUIRE(worker > 0);
        REQUIRE(::kill(worker, SIGKILL) == 0);
        // Degraded, then back: the writers never stopped meanwhile.
        REQUIRE(wait_for_client_log(client_log, "replica degraded", round));
        REQUIRE(wait_for_client_log(client_log, "replica back in sync", round));
        const auto after = persisted();
        while (persisted() < after + 300) // persists replicate again
            std::this_thread::sleep_for(1ms);
    }
    // Each resync told rpmemd how it went (what rpmemctl status and events show).
    CHECK(host.wait_for_log("resync of 'degraded.set' started", 3));
    CHECK(host.wait_for_log("resync of 'degraded.set' finished", 3));
    stop.store(true);
    for (auto& thread : threads)
        thread.join();
    for (auto& writer : writers) {
        INFO(writer->first_failure);
        CHECK(writer->failures.load() == 0);
    }
    REQUIRE(rpmem_close(rpp) == 0);

    // The target's copy alone: byte for byte the local pool (NOHDRS: no header of its own).
    REQUIRE(host.wait_for_log("pool set 'degraded.set' closed"));
    const std::string target = read_text(host.dir() / "degraded.0");
    REQUIRE(target.size() == kPoolSize);
    std::size_t first_difference = kPoolSize;
    for (std::size_t i = 0; i < kPoolSize && first_difference == kPoolSize; ++i)
        if (static_cast<std::byte>(target[i]) != pool[i])
            first_difference = i;
    CHECK(first_difference == kPoolSize);
    CHECK_THAT(read_text(host.sets_dir() + "/degraded.set.rpmem-state"),
               Catch::Contains("state = consistent"));
    const std::string log = read_text(client_log);
    CHECK(count_of(log, "replica degraded (") == 3); // one warning per state change
}
