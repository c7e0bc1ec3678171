// SPDX-License-Identifier: BSD-3-Clause
// The data path end to end without the control plane: rpmemd's FabricTarget serving a real pool
// file, the client's LaneSet connected to it over tcp or sockets on 127.0.0.1. Checks that every
// persistence method lands the bytes in the target's pool, that the target protects itself
// (header, bounds, tokens, lanes) and that stopping the target fences the lanes.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "base/page_buffer.h"
#include "client/lane_set.h"
#include "poolset/parser.h"
#include "poolset/pool_mapping.h"
#include "rpmemd/worker/fabric_target.h"
#include "rpmemd/worker/responder_pool.h"
#include "temp_dir.h"

using namespace rpmem;

namespace {

constexpr std::size_t kPoolSize = 8 << 20;

struct TargetOptions {
    std::size_t protected_prefix = 0;
    unsigned lanes = 2;
    std::chrono::nanoseconds reply_delay{0};     // rpmemd's inject-reply-delay
    daemon::ResponderPool* responders = nullptr; // null: the target's own
};

// A target pool file and its FabricTarget, and a local pool of the same size.
class Fixture {
public:
    Fixture(std::string provider, std::size_t protected_prefix = 0, unsigned lanes = 2)
        : Fixture(std::move(provider),
                  TargetOptions{.protected_prefix = protected_prefix, .lanes = lanes}) {}
    Fixture(std::string provider, const TargetOptions& options)
        : provider_(std::move(provider))
        , dir_("rpmem-data-plane") {
        auto set = poolset::parse(
            "PMEMPOOLSET\nOPTION NOHDRS\n8M " + (dir_ / "part0").string() + "\n", "test.set");
        REQUIRE(set);
        auto mapping = poolset::PoolMapping::create(*set);
        REQUIRE(mapping);
        mapping_.emplace(std::move(*mapping));
        for (std::size_t i = 0; i < token_.size(); ++i)
            token_[i] = static_cast<std::uint8_t>(i * 7 + 3);

        daemon::DataPlaneRequest request;
        request.provider = *protocol::provider_preference_from_name(provider_);
        request.bind_host = "127.0.0.1";
        request.pool = &*mapping_;
        request.protected_prefix = options.protected_prefix;
        request.lanes = options.lanes;
        request.token = token_;
        request.session_name = "test session";
        request.reply_delay = options.reply_delay;
        auto target = options.responders == nullptr
                          ? daemon::start_fabric_target(request)
                          : daemon::start_fabric_target(request, daemon::target_pool_of(*mapping_),
                                                        options.responders);
        REQUIRE(target);
        target_ = std::move(*target);

        auto local = PageBuffer::allocate(kPoolSize);
        REQUIRE(local);
        local_ = std::move(*local);
        settings_.timeout = std::chrono::milliseconds(5000);
        settings_.connect_timeout = std::chrono::milliseconds(5000);
    }

    protocol::DataPath data_path(protocol::PersistMethod method) const {
        return target_->info().data_path(method, mapping_->size(), token_);
    }

    Result<std::unique_ptr<client::LaneSet>> connect(protocol::PersistMethod method,
                                                     unsigned lanes = 1) {
        return client::LaneSet::connect(data_path(method), "127.0.0.1", local(), settings_, lanes,
                                        nullptr);
    }

    std::span<std::byte> local() const { return {local_.data(), kPoolSize}; }
    const std::byte* remote() const { return reinterpret_cast<const std::byte*>(mapping_->data()); }
    void fill(std::size_t offset, std::size_t length, int seed) {
        for (std::size_t i = 0; i < length; ++i)
            local_.data()[offset + i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
    }
    bool same(std::size_t offset, std::size_t length) const {
        return std::memcmp(local_.data() + offset, remote() + offset, length) == 0;
    }

    daemon::DataPlane& target() { return *target_; }
    protocol::SessionToken& token() { return token_; }
    client::Settings& settings() { return settings_; }

private:
    std::string provider_;
    test::TempDir dir_;
    std::optional<poolset::PoolMapping> mapping_;
    protocol::SessionToken token_{};
    std::unique_ptr<daemon::DataPlane> target_;
    PageBuffer local_;
    client::Settings settings_;
};

} // namespace

TEST_CASE("every method lands strict and relaxed persists in the target's pool") {
    const std::string provider = GENERATE("tcp", "sockets");
    const auto method = GENERATE(protocol::PersistMethod::gpspm, protocol::PersistMethod::commit,
                                 protocol::PersistMethod::apm);
    INFO("provider " << provider << ", method " << protocol::name_of(method));
    Fixture fixture(provider);
    auto lanes = fixture.connect(method);
    REQUIRE(lanes);
    persist::InitiatorLane& lane = (*lanes)->lane(0);

    struct Range {
        std::size_t offset, length;
    };
    // Small, unaligned, one page, just above the inline size, and a large pipelined range.
    for (Range range : {Range{4096, 64}, Range{5003, 77}, Range{8192, 4096}, Range{65536, 65537},
                        Range{1 << 20, (1 << 20) + 13}}) {
        fixture.fill(range.offset, range.length, 1);
        REQUIRE(lane.persist(range.offset, range.length, false));
        CHECK(fixture.same(range.offset, range.length));

        fixture.fill(range.offset, range.length, 2);
        REQUIRE(lane.persist(range.offset, range.length, true));
        CHECK(fixture.same(range.offset, range.length));
    }

    SECTION("deep persist") {
        fixture.fill(3 << 20, 10000, 5);
        REQUIRE(lane.deep_persist(3 << 20, 10000));
        CHECK(fixture.same(3 << 20, 10000));
    }
    SECTION("many flushes, one drain") {
        for (std::size_t i = 0; i < 40; ++i) {
            fixture.fill(4 << 20 | i * 4096, 100, static_cast<int>(i));
            REQUIRE(lane.flush(4 << 20 | i * 4096, 100, i % 2 == 0));
        }
        REQUIRE(lane.drain());
        for (std::size_t i = 0; i < 40; ++i)
            CHECK(fixture.same(4 << 20 | i * 4096, 100));
    }
    SECTION("read back what was persisted") {
        fixture.fill(2 << 20, 300000, 9);
        REQUIRE(lane.persist(2 << 20, 300000, false));
        std::vector<std::byte> back(300000);
        REQUIRE(lane.read(back, 2 << 20));
        CHECK(std::memcmp(back.data(), fixture.local().data() + (2 << 20), back.size()) == 0);
    }
}

TEST_CASE("lanes work concurrently") {
    Fixture fixture("tcp", 0, 2);
    auto lanes = fixture.connect(protocol::PersistMethod::gpspm, 2);
    REQUIRE(lanes);
    REQUIRE((*lanes)->size() == 2);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (unsigned l = 0; l < 2; ++l) {
        threads.emplace_back([&, l] {
            for (std::size_t i = 0; i < 200; ++i) {
                std::size_t offset = (l + 1) * (1 << 20) + i * 256;
                fixture.fill(offset, 256, static_cast<int>(i + l));
                if (!(*lanes)->lane(l).persist(offset, 256, false))
                    ++failures;
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    CHECK(failures == 0);
    CHECK(fixture.same(1 << 20, 2 << 20));
}

TEST_CASE("the target refuses writes into the protected header, and the lane fails") {
    Fixture fixture("tcp", 4096);
    auto lanes = fixture.connect(protocol::PersistMethod::gpspm);
    REQUIRE(lanes);
    fixture.fill(0, 64, 4);
    auto refused = (*lanes)->lane(0).persist(0, 64, false);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().errno_value() == EINVAL);
    CHECK_THAT(refused.error().message(), Catch::Contains("lane 0"));
    for (std::size_t i = 0; i < 64; ++i)
        REQUIRE(fixture.remote()[i] == std::byte{0});
}

TEST_CASE("a wrong token or an ungranted lane is refused") {
    Fixture fixture("tcp", 0, 1);
    SECTION("wrong token") {
        auto path = fixture.data_path(protocol::PersistMethod::gpspm);
        path.token[0] ^= 1;
        auto lanes = client::LaneSet::connect(path, "127.0.0.1", fixture.local(),
                                              fixture.settings(), 1, nullptr);
        REQUIRE_FALSE(lanes);
        CHECK(lanes.error().errno_value() == ECONNREFUSED);
    }
    SECTION("more lanes than granted") {
        auto lanes = fixture.connect(protocol::PersistMethod::gpspm, 2);
        REQUIRE_FALSE(lanes);
        CHECK(lanes.error().errno_value() == ECONNREFUSED);
        CHECK_THAT(lanes.error().message(), Catch::Contains("lane 1"));
    }
}

TEST_CASE("stopping the target fences its lanes: the next persist fails, it does not hang") {
    Fixture fixture("tcp");
    fixture.settings().timeout = std::chrono::milliseconds(3000);
    auto lanes = fixture.connect(protocol::PersistMethod::gpspm);
    REQUIRE(lanes);
    fixture.fill(4096, 64, 1);
    REQUIRE((*lanes)->lane(0).persist(4096, 64, false));

    fixture.target().stop();
    const auto start = std::chrono::steady_clock::now();
    auto failed = (*lanes)->lane(0).persist(4096, 64, false);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().errno_value() == ECONNRESET);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(3500));
}

TEST_CASE("inject-reply-delay holds each reply back after its data has landed") {
    const std::string provider = GENERATE("tcp", "sockets");
    INFO("provider " << provider);
    constexpr auto kDelay = std::chrono::milliseconds(300);
    Fixture fixture(provider, TargetOptions{.reply_delay = kDelay});
    auto lanes = fixture.connect(protocol::PersistMethod::gpspm);
    REQUIRE(lanes);
    persist::InitiatorLane& lane = (*lanes)->lane(0);

    // A lower bound only: the reply cannot come before its delay is over.
    fixture.fill(4096, 64, 1);
    auto start = std::chrono::steady_clock::now();
    REQUIRE(lane.persist(4096, 64, false));
    CHECK(std::chrono::steady_clock::now() - start >= kDelay);
    CHECK(fixture.same(4096, 64));

    // Relaxed persists, then a drain: every held reply arrives, the last no sooner than the
    // delay after the last flush.
    for (std::size_t i = 0; i < 6; ++i) {
        fixture.fill(1 << 20 | i * 4096, 100, static_cast<int>(i));
        REQUIRE(lane.flush(1 << 20 | i * 4096, 100, false));
    }
    start = std::chrono::steady_clock::now();
    REQUIRE(lane.drain());
    CHECK(std::chrono::steady_clock::now() - start >= kDelay / 2);
    for (std::size_t i = 0; i < 6; ++i)
        CHECK(fixture.same(1 << 20 | i * 4096, 100));
}

TEST_CASE("a held reply holds up no other session on its responder thread") {
    // One thread serves both targets: a sleep in its loop would stall the second session's
    // persist behind the first's held reply.
    daemon::ResponderPool responders(daemon::ResponderOptions{.threads = 1});
    Fixture delayed(
        "tcp", TargetOptions{.reply_delay = std::chrono::seconds(3), .responders = &responders});
    Fixture prompt("tcp", TargetOptions{.responders = &responders});
    auto delayed_lanes = delayed.connect(protocol::PersistMethod::gpspm);
    auto prompt_lanes = prompt.connect(protocol::PersistMethod::gpspm);
    REQUIRE(delayed_lanes);
    REQUIRE(prompt_lanes);

    delayed.fill(4096, 64, 3);
    std::atomic<bool> delayed_done{false};
    std::thread waiter([&] {
        CHECK((*delayed_lanes)->lane(0).persist(4096, 64, false));
        delayed_done = true;
    });
    // Its data lands at once; only the reply waits.
    while (!delayed.same(4096, 64))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < 20; ++i) {
        prompt.fill(8192, 64, i);
        REQUIRE((*prompt_lanes)->lane(0).persist(8192, 64, false));
        CHECK(prompt.same(8192, 64));
    }
    CHECK_FALSE(delayed_done.load());
    waiter.join();
    CHECK(delayed_done.load());
}
