// SPDX-License-Identifier: BSD-3-Clause
// Pool set names through the real rpmemd: `..`, absolute names and symbolic links leading out
// of the pool set directory are refused (EINVAL, bad_name) for create, open and remove, and no
// file outside is created or removed; names in subdirectories and links staying beneath work.
#include <cerrno>
#include <filesystem>

#include <catch2/catch.hpp>

#include "channel/client.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using protocol::Status;

namespace {

Status create_status(channel::Client& client, const std::string& name) {
    protocol::CreateRequest request;
    request.pool_set = name;
    request.lanes = 1;
    request.attributes = pmemobj_attributes();
    auto reply = client.call(request);
    REQUIRE(reply);
    return protocol::reply_status(*reply);
}

Status open_status(channel::Client& client, const std::string& name) {
    protocol::OpenRequest request;
    request.pool_set = name;
    request.lanes = 1;
    auto reply = client.call(request);
    REQUIRE(reply);
    return protocol::reply_status(*reply);
}

Status remove_status(channel::Client& client, const std::string& name) {
    auto reply = client.call(protocol::RemoveRequest{name, true, true});
    REQUIRE(reply);
    return protocol::reply_status(*reply);
}

} // namespace

TEST_CASE("names leading out of the pool set directory are refused") {
    TargetHost host;
    // A perfectly valid set outside the pool set directory, as bait.
    std::string outside = host.dir().write("outside/bait.set",
                                           pool_set_text(host.dir().path() / "outside", "bait", 1));
    std::filesystem::create_symlink(outside, host.sets_dir() + "/absolute-link.set");
    std::filesystem::create_symlink("../outside/bait.set", host.sets_dir() + "/relative-link.set");
    std::filesystem::create_symlink(host.dir().path() / "outside", host.sets_dir() + "/linked-dir");
    auto client = host.client();

    for (std::string name :
         {std::string("../outside/bait.set"), outside, std::string("absolute-link.set"),
          std::string("relative-link.set"), std::string("linked-dir/bait.set"),
          std::string("linked-dir/../x"), std::string("./../outside/bait.set")}) {
        CAPTURE(name);
        CHECK(create_status(*client, name) == Status::bad_name);
        CHECK(open_status(*client, name) == Status::bad_name);
        CHECK(remove_status(*client, name) == Status::bad_name);
        CHECK(protocol::errno_of(Status::bad_name) == EINVAL);
    }
    CHECK_FALSE(std::filesystem::exists(host.dir() / "outside/bait.0"));
    CHECK(std::filesystem::exists(outside));
}

TEST_CASE("names in subdirectories and links staying beneath are served") {
    TargetHost host;
    host.write_set("team/deep/pool.set", "deep", 1);
    host.write_set("plain.set", "plain", 1);
    std::filesystem::create_symlink("plain.set", host.sets_dir() + "/alias.set");
    auto client = host.client();
    CHECK(create_status(*client, "team/deep/pool.set") == Status::ok);
    CHECK(client->call(protocol::CloseRequest{}));
    CHECK(create_status(*client, "alias.set") == Status::ok);
    CHECK(client->call(protocol::CloseRequest{}));
    // The link and the file it names are one pool.
    CHECK(create_status(*client, "plain.set") == Status::exists);
    CHECK(std::filesystem::exists(host.dir() / "deep.0"));
    CHECK(std::filesystem::exists(host.dir() / "plain.0"));
}
