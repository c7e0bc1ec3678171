// SPDX-License-Identifier: BSD-3-Clause
// Round trips through the real rpmemd: create, close, open, set_attr, remove and status over
// the TLS control channel, with the real fabric data plane started for each opened pool;
// created files are 0600; no token reaches the log; SIGTERM fences, unlocks and exits 0.
#include <csignal>
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/stat.h>

#include "channel/client.h"
#include "control_requests.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "poolset/pool_mapping.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using protocol::Status;

namespace {

std::string hex(const protocol::SessionToken& token) {
    std::string text;
    for (auto byte : token)
        text += fmt::format("{:02x}", byte);
    return text;
}

} // namespace

TEST_CASE("create, close, open, set_attr and remove round trips") {
    TargetHost host;
    host.write_set("pool.set", "pool", 2);
    auto client = host.client();
    CHECK(client->hello().identity == "alice");

    protocol::CreateRequest create;
    create.pool_set = "pool.set";
    create.pool_size = 2u << 20;
    create.lanes = 3;
    create.attributes = pmemobj_attributes();
    auto created = call_ok<protocol::CreateReply>(*client, create);
    const protocol::DataPath& path = created.data_path;
    CHECK(path.port != 0);
    CHECK(path.host == "127.0.0.1");
    CHECK(path.lanes >= 1);
    CHECK(path.lanes <= 3);
    CHECK(path.pool_size == (4u << 20) - 4096);
    // A file on a disk with a software provider: only GPSPM makes it durable.
    CHECK(path.persist_method == protocol::PersistMethod::gpspm);
    CHECK(path.token != protocol::SessionToken{});
    CHECK_FALSE(created.message.empty());
    for (const char* part : {"pool.0", "pool.1"}) {
        struct stat st {};
        REQUIRE(::stat((host.dir() / part).c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0600);
    }

    auto status = call_ok<protocol::StatusReply>(*client, protocol::StatusRequest{});
    CHECK(status.sessions == 1);
    CHECK(status.pools_in_use == 1);
    REQUIRE(status.session_list.size() == 1);
    CHECK(status.session_list[0].pool_set == "pool.set");
    CHECK_THAT(status.software, Catch::StartsWith("rpmemd "));

    call_ok<protocol::CloseReply>(*client, protocol::CloseRequest{});

    protocol::OpenRequest open;
    open.pool_set = "pool.set";
    open.pool_size = 2u << 20;
    open.lanes = 1;
    auto opened = call_ok<protocol::OpenReply>(*client, open);
    CHECK(opened.attributes == pmemobj_attributes());
    CHECK(opened.data_path.token != path.token);
    CHECK(opened.data_path.lanes == 1);

    PoolAttributes changed = pmemobj_attributes();
    changed.uuid[0] = 0xAB;
    changed.prev_uuid[15] = 0xCD;
    call_ok<protocol::SetAttrReply>(*client, protocol::SetAttrRequest{changed});
    call_ok<protocol::CloseReply>(*client, protocol::CloseRequest{});
    auto reopened = call_ok<protocol::OpenReply>(*client, open);
    CHECK(reopened.attributes == changed);
    call_ok<protocol::CloseReply>(*client, protocol::CloseRequest{});

    call_ok<protocol::RemoveReply>(*client, protocol::RemoveRequest{"pool.set", false, false});
    CHECK_FALSE(std::filesystem::exists(host.dir() / "pool.0"));
    CHECK(std::filesystem::exists(host.sets_dir() + "/pool.set"));

    // Create again and close with remove: the pool goes, the set file stays.
    call_ok<protocol::CreateReply>(*client, create);
    call_ok<protocol::CloseReply>(*client, protocol::CloseRequest{true});
    CHECK_FALSE(std::filesystem::exists(host.dir() / "pool.1"));

    client->close();
    // The log tells the story with session ids, and never a token.
    std::string log = host.dir().read("rpmemd.log");
    CHECK_THAT(log, Catch::Contains("session 1 (alice@127.0.0.1:"));
    CHECK_THAT(log, Catch::Contains("persistence method gpspm"));
    CHECK_THAT(log, !Catch::Contains(hex(path.token)));
    CHECK_THAT(log, !Catch::Contains(hex(opened.data_path.token)));
}

TEST_CASE("SIGTERM ends every session, fences and unlocks its pool, and exits 0") {
    TargetHost host;
    host.write_set("pool.set", "pool", 1);
    auto client = host.client();
    protocol::CreateRequest create;
    create.pool_set = "pool.set";
    create.lanes = 1;
    create.attributes = pmemobj_attributes();
    call_ok<protocol::CreateReply>(*client, create);

    auto set = poolset::parse(pool_set_text(host.dir().path(), "pool", 1), "pool.set");
    REQUIRE(set);
    auto locked = poolset::PoolMapping::open(*set);
    REQUIRE_FALSE(locked);
    CHECK(locked.error().errno_value() == EBUSY);

    CHECK(host.daemon().stop(SIGTERM) == 0); // also: no leak at exit under ASan
    CHECK(poolset::PoolMapping::open(*set));
    auto after = client->call(protocol::StatusRequest{});
    CHECK_FALSE(after);
    CHECK_THAT(host.dir().read("rpmemd.log"), Catch::Contains("rpmemd stopped"));
}
