// SPDX-License-Identifier: BSD-3-Clause
// DirtyExtents: what a degraded replica missed, and how the resync takes it back.
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "client/dirty_extents.h"
#include "client/extent_locks.h"

using rpmem::client::DirtyExtents;
using rpmem::client::ExtentLocks;

namespace {
constexpr std::size_t kExtent = DirtyExtents::kExtentSize;
}

TEST_CASE("a mark covers every extent the range touches, no more") {
    DirtyExtents dirty(64 * kExtent);
    CHECK(dirty.empty());
    dirty.mark(kExtent - 1, 2); // straddles extents 0 and 1
    CHECK(dirty.count() == 2);
    dirty.mark(10 * kExtent, kExtent); // exactly extent 10
    CHECK(dirty.count() == 3);
    dirty.mark(10 * kExtent + 8, 8); // again: still one
    CHECK(dirty.count() == 3);
    dirty.mark(0, 0);            // nothing
    dirty.mark(64 * kExtent, 8); // beyond the pool
    CHECK(dirty.count() == 3);

    auto first = dirty.take(0);
    REQUIRE(first);
    CHECK(first->offset == 0);
    CHECK(first->length == kExtent);
    auto second = dirty.take(0);
    REQUIRE(second);
    CHECK(second->offset == kExtent);
    auto third = dirty.take(0);
    REQUIRE(third);
    CHECK(third->offset == 10 * kExtent);
    CHECK_FALSE(dirty.take(0));
    CHECK(dirty.empty());
}

TEST_CASE("marks across word boundaries and the whole pool") {
    const std::size_t extents = 200; // four 64-bit words, the last partly used
    DirtyExtents dirty(extents * kExtent);
    dirty.mark(60 * kExtent, 10 * kExtent); // 60..69 spans words 0 and 1
    CHECK(dirty.count() == 10);
    dirty.mark(0, extents * kExtent);
    CHECK(dirty.count() == extents);
    std::size_t taken = 0;
    while (dirty.take(0))
        ++taken;
    CHECK(taken == extents);
}

TEST_CASE("the last extent of a pool that is not a multiple of the extent is short") {
    DirtyExtents dirty(3 * kExtent + 100);
    dirty.mark(3 * kExtent + 50, 10);
    auto last = dirty.take(0);
    REQUIRE(last);
    CHECK(last->offset == 3 * kExtent);
    CHECK(last->length == 100);
}

TEST_CASE("take_run takes contiguous extents up to the limit and wraps the search") {
    DirtyExtents dirty(100 * kExtent);
    dirty.mark(5 * kExtent, 20 * kExtent); // 5..24
    dirty.mark(90 * kExtent, kExtent);
    auto run = dirty.take_run(0, 16);
    REQUIRE(run);
    CHECK(run->offset == 5 * kExtent);
    CHECK(run->length == 16 * kExtent);
    run = dirty.take_run(50 * kExtent, 16); // from 50: extent 90 first, then wraps
    REQUIRE(run);
    CHECK(run->offset == 90 * kExtent);
    CHECK(run->length == kExtent);
    run = dirty.take_run(91 * kExtent, 16);
    REQUIRE(run);
    CHECK(run->offset == 21 * kExtent);
    CHECK(run->length == 4 * kExtent);
    CHECK(dirty.empty());
}

TEST_CASE("concurrent marks are never lost while another thread takes") {
    const std::size_t extents = 4096;
    DirtyExtents dirty(extents * kExtent);
    std::atomic<bool> done{false};
    std::vector<char> seen(extents, 0);
    std::thread taker([&] {
        while (!done.load() || !dirty.empty())
            while (auto run = dirty.take_run(0, 8))
                for (std::size_t e = run->offset / kExtent;
                     e < (run->offset + run->length) / kExtent; ++e)
                    seen[e] = 1;
    });
    std::vector<std::thread> markers;
    for (int t = 0; t < 2; ++t)
        markers.emplace_back([&, t] {
            for (std::size_t e = static_cast<std::size_t>(t); e < extents; e += 2)
                dirty.mark(e * kExtent + 7, 1);
        });
    for (auto& marker : markers)
        marker.join();
    done.store(true);
    taker.join();
    for (std::size_t e = 0; e < extents; ++e)
        REQUIRE(seen[e] == 1);
}

TEST_CASE("extent stripes: a range maps onto the stripes of its extents") {
    CHECK(ExtentLocks::stripes_of(0, 0, kExtent) == 0);
    CHECK(ExtentLocks::stripes_of(0, 1, kExtent) == 1);
    CHECK(ExtentLocks::stripes_of(kExtent - 1, 2, kExtent) == 3);
    CHECK(ExtentLocks::stripes_of(64 * kExtent, kExtent, kExtent) == 1); // wraps onto stripe 0
    CHECK(ExtentLocks::stripes_of(0, 64 * kExtent, kExtent) == ~0ULL);
    CHECK(ExtentLocks::stripes_of(63 * kExtent, 2 * kExtent, kExtent) == ((1ULL << 63) | 1));
}

TEST_CASE("an exclusive hold waits for the shared holders of its stripe") {
    ExtentLocks locks;
    std::atomic<int> stage{0};
    auto shared = std::make_unique<ExtentLocks::Hold>(locks, 0b101, false);
    std::thread copier([&] {
        ExtentLocks::Hold exclusive(locks, 0b100, true);
        stage.store(2);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(stage.load() == 0);                        // still held shared
    { ExtentLocks::Hold other(locks, 0b010, true); } // a stripe nobody holds: no wait
    stage.store(1);
    shared.reset();
    copier.join();
    CHECK(stage.load() == 2);
}
