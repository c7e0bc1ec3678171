// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "persist/request_handler.h"

using namespace rpmem::persist;
namespace protocol = rpmem::protocol;

namespace {

// A pool in ordinary memory that records which ranges it was asked to make durable, and can
// be told to fail them (as msync does on a failing disk).
class MemoryPool final : public TargetPool {
public:
    explicit MemoryPool(std::size_t size)
        : bytes_(size) {}

    std::span<std::byte> bytes() const noexcept override {
        return {const_cast<std::byte*>(bytes_.data()), bytes_.size()};
    }
    rpmem::Result<void> persist(std::uint64_t offset, std::uint64_t length) const override {
        return record(offset, length, false);
    }
    rpmem::Result<void> deep_persist(std::uint64_t offset, std::uint64_t length) const override {
        return record(offset, length, true);
    }

    struct Flush {
        std::uint64_t offset;
        std::uint64_t length;
        bool deep;
        bool operator==(const Flush&) const = default;
    };
    mutable std::vector<Flush> flushes;
    // The pool's bytes at each flush, when asked (what a crash right after it would leave).
    bool snapshot = false;
    mutable std::vector<std::vector<std::byte>> snapshots;
    int fail_with = 0;

private:
    rpmem::Result<void> record(std::uint64_t offset, std::uint64_t length, bool deep) const {
        flushes.push_back({offset, length, deep});
        if (snapshot)
            snapshots.push_back(bytes_);
        if (fail_with != 0)
            return rpmem::fail(rpmem::Error::from_errno(fail_with, "msync"));
        return {};
    }
    std::vector<std::byte> bytes_;
};

std::vector<std::byte> message(const protocol::LaneRequest& request,
                               std::vector<std::byte> data = {}) {
    std::vector<std::byte> out(protocol::kLaneHeaderSize);
    encode(request, out);
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

std::vector<std::byte> pattern(std::size_t length, int seed) {
    std::vector<std::byte> out(length);
    for (std::size_t i = 0; i < length; ++i)
        out[i] = static_cast<std::byte>(i * 13 + seed);
    return out;
}

} // namespace

TEST_CASE("an inline persist lands in the pool, is flushed, and is acknowledged when asked") {
    MemoryPool pool(64 * 1024);
    RequestHandler handler(pool, 4096, 4096);
    auto data = pattern(100, 3);

    auto outcome = handler.handle(message({.operation = protocol::LaneOperation::persist_inline,
                                           .flags = protocol::kAckRequested,
                                           .sequence = 42,
                                           .offset = 5000,
                                           .length = 100},
                                          data));
    REQUIRE(outcome.reply);
    CHECK(outcome.reply->sequence == 42);
    CHECK(outcome.reply->status == 0);
    CHECK_FALSE(outcome.close_lane);
    CHECK(std::memcmp(pool.bytes().data() + 5000, data.data(), data.size()) == 0);
    CHECK(pool.flushes == std::vector<MemoryPool::Flush>{{5000, 100, false}});

    auto quiet = handler.handle(message({.operation = protocol::LaneOperation::deep_persist_inline,
                                         .sequence = 43,
                                         .offset = 8192,
                                         .length = 8},
                                        pattern(8, 1)));
    CHECK_FALSE(quiet.reply);
    CHECK(pool.flushes.back() == MemoryPool::Flush{8192, 8, true});
}

TEST_CASE("flush, deep flush and barrier do what they say") {
    MemoryPool pool(64 * 1024);
    RequestHandler handler(pool, 4096, 0);
    CHECK_FALSE(handler
                    .handle(message(
                        {.operation = protocol::LaneOperation::flush, .offset = 0, .length = 10}))
                    .reply);
    CHECK_FALSE(
        handler
            .handle(message(
                {.operation = protocol::LaneOperation::deep_flush, .offset = 16, .length = 32}))
            .reply);
    auto barrier = handler.handle(message({.operation = protocol::LaneOperation::barrier,
                                           .flags = protocol::kAckRequested,
                                           .sequence = 7}));
    REQUIRE(barrier.reply);
    CHECK(barrier.reply->sequence == 7);
    CHECK(pool.flushes == std::vector<MemoryPool::Flush>{{0, 10, false}, {16, 32, true}});
}

std::vector<std::byte> listed(std::initializer_list<protocol::LaneRange> ranges) {
    std::vector<protocol::LaneRange> list(ranges);
    std::vector<std::byte> out(list.size() * protocol::kLaneRangeSize);
    protocol::encode(std::span<const protocol::LaneRange>(list), out);
    return out;
}

TEST_CASE("a flush list flushes every range it names, in order, and counts their bytes") {
    MemoryPool pool(64 * 1024);
    RequestHandler handler(pool, 4096, 4096);
    auto list = listed({{8192, 100}, {4096, 8}, {60000, 0}, {65536 - 64, 64}});
    auto outcome = handler.handle(message({.operation = protocol::LaneOperation::flush_list,
                                           .flags = protocol::kAckRequested,
                                           .sequence = 3,
                                           .length = list.size()},
                                          list));
    REQUIRE(outcome.reply);
    CHECK(outcome.reply->sequence == 3);
    CHECK(outcome.reply->status == 0);
    CHECK(outcome.persisted_bytes == 172);
    CHECK(pool.flushes ==
          std::vector<MemoryPool::Flush>{
              {8192, 100, false}, {4096, 8, false}, {60000, 0, false}, {65536 - 64, 64, false}});

    // One range into the header refuses the whole list before anything is flushed.
    pool.flushes.clear();
    auto hostile = listed({{8192, 100}, {0, 4096}});
    auto refused = handler.handle(message(
        {.operation = protocol::LaneOperation::flush_list, .sequence = 4, .length = hostile.size()},
        hostile));
    REQUIRE(refused.reply);
    CHECK(refused.reply->status == EINVAL);
    CHECK(refused.close_lane);
    CHECK(pool.flushes.empty());

    // A failing range stops the list there and is answered with its errno.
    pool.fail_with = EIO;
    auto failed = handler.handle(message(
        {.operation = protocol::LaneOperation::flush_list, .sequence = 5, .length = list.size()},
        list));
    REQUIRE(failed.reply);
    CHECK(failed.reply->status == EIO);
    CHECK(pool.flushes.size() == 1);
}

std::vector<std::byte> records(std::initializer_list<std::pair<protocol::LaneRecord, int>> list) {
    std::vector<std::byte> out;
    for (const auto& [record, seed] : list) {
        const std::size_t at = out.size();
        out.resize(at + protocol::lane_record_size(record.length));
        protocol::encode(record, pattern(record.length, seed), std::span(out).subspan(at));
    }
    return out;
}

TEST_CASE("a record list is applied in order, each record flushed before the next is written") {
    MemoryPool pool(64 * 1024);
    pool.snapshot = true;
    RequestHandler handler(pool, 4096, 4096);
    // The second record overwrites part of the first: order decides what the pool holds.
    auto list = records({{{8192, 100, 0}, 1}, {{8200, 16, protocol::kRecordDeep}, 2}});
    auto outcome = handler.handle(message({.operation = protocol::LaneOperation::persist_records,
                                           .flags = protocol::kAckRequested,
                                           .sequence = 6,
                                           .offset = 777, // the initiator's lag: not a range
                                           .length = list.size()},
                                          list));
    REQUIRE(outcome.reply);
    CHECK(outcome.reply->sequence == 6);
    CHECK(outcome.reply->status == 0);
    CHECK_FALSE(outcome.close_lane);
    CHECK(outcome.persisted_bytes == 116);
    CHECK(outcome.initiator_lag == std::optional<std::uint64_t>(777)); // for status and metrics
    CHECK(pool.flushes == std::vector<MemoryPool::Flush>{{8192, 100, false}, {8200, 16, true}});
    const auto first = pattern(100, 1);
    const auto second = pattern(16, 2);
    // At the first flush: the first record whole, nothing of the second.
    REQUIRE(pool.snapshots.size() == 2);
    CHECK(std::memcmp(pool.snapshots[0].data() + 8192, first.data(), 100) == 0);
    // At the end: the second record over the first.
    std::vector<std::byte> expected = first;
    std::memcpy(expected.data() + 8, second.data(), 16);
    CHECK(std::memcmp(pool.bytes().data() + 8192, expected.data(), 100) == 0);

    // A bad record refuses the whole message before anything is written.
    pool.flushes.clear();
    auto hostile = records({{{16384, 8, 0}, 3}, {{0, 8, 0}, 4}});
    auto refused = handler.handle(message({.operation = protocol::LaneOperation::persist_records,
                                           .sequence = 7,
                                           .length = hostile.size()},
                                          hostile));
    REQUIRE(refused.reply);
    CHECK(refused.reply->status == EINVAL);
    CHECK(refused.close_lane);
    CHECK(pool.flushes.empty());
    CHECK(pool.bytes()[16384] == std::byte{0});

    // A failing flush stops the list there, answered with its errno.
    pool.fail_with = EIO;
    auto failed = handler.handle(message({.operation = protocol::LaneOperation::persist_records,
                                          .sequence = 8,
                                          .length = list.size()},
                                         list));
    REQUIRE(failed.reply);
    CHECK(failed.reply->status == EIO);
    CHECK(pool.flushes.size() == 1);
}

TEST_CASE("a failed flush is answered with its errno, even unasked") {
    MemoryPool pool(64 * 1024);
    pool.fail_with = EIO;
    RequestHandler handler(pool, 4096, 0);
    auto outcome = handler.handle(
        message({.operation = protocol::LaneOperation::flush, .sequence = 9, .length = 4096}));
    REQUIRE(outcome.reply);
    CHECK(outcome.reply->sequence == 9);
    CHECK(outcome.reply->status == EIO);
    CHECK_FALSE(outcome.close_lane);
}

TEST_CASE("a malformed or out-of-range message leaves the pool untouched and closes the lane") {
    MemoryPool pool(16 * 1024);
    RequestHandler handler(pool, 4096, 4096);
    auto untouched = pattern(0, 0);

    SECTION("into the header") {
        auto outcome = handler.handle(message({.operation = protocol::LaneOperation::persist_inline,
                                               .sequence = 5,
                                               .offset = 0,
                                               .length = 8},
                                              pattern(8, 9)));
        REQUIRE(outcome.reply);
        CHECK(outcome.reply->sequence == 5);
        CHECK(outcome.reply->status == EINVAL);
        CHECK(outcome.close_lane);
    }
    SECTION("past the end") {
        auto outcome = handler.handle(message({.operation = protocol::LaneOperation::persist_inline,
                                               .offset = 16 * 1024 - 4,
                                               .length = 8},
                                              pattern(8, 9)));
        REQUIRE(outcome.reply);
        CHECK(outcome.reply->status == EINVAL);
        CHECK(outcome.close_lane);
    }
    SECTION("more inline data than the lane's buffer") {
        auto outcome = handler.handle(message(
            {.operation = protocol::LaneOperation::persist_inline, .offset = 4096, .length = 4104},
            pattern(4104, 9)));
        REQUIRE(outcome.reply);
        CHECK(outcome.reply->status == EPROTO);
        CHECK(outcome.close_lane);
    }
    SECTION("a truncated header") {
        auto outcome = handler.handle(std::vector<std::byte>(5));
        REQUIRE(outcome.reply);
        CHECK(outcome.reply->status == EPROTO);
        CHECK(outcome.close_lane);
    }
    for (std::byte b : pool.bytes())
        REQUIRE(b == std::byte{0});
    CHECK(pool.flushes.empty());
}
