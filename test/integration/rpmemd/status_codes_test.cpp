// SPDX-License-Identifier: BSD-3-Clause
// Every status of the protocol (PMDK's RPMEM_SUCCESS..RPMEM_ERR_POOL_CFG and ours) produced by
// a real situation against the real rpmemd, and the errno a client sees for it: the table of
// reference §4.4, row by row.
#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "channel/client.h"
#include "control_requests.h"
#include "fabric/provider.h"
#include "protocol/frame_header.h"
#include "raw_tls_client.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using protocol::Status;

namespace {

// Every message the daemon sent in a reply, for the check that none shows a server path.
std::vector<std::string>& reply_messages() {
    static std::vector<std::string> messages;
    return messages;
}

// The status of a reply to `request`, and the errno channel::expect turns it into.
template <typename ReplyType>
std::pair<Status, int> outcome(channel::Client& client, const protocol::Request& request) {
    auto reply = client.call(request);
    INFO((reply ? std::string() : reply.error().message()));
    REQUIRE(reply);
    Status status = protocol::reply_status(*reply);
    reply_messages().push_back(protocol::reply_message(*reply));
    auto expected = channel::expect<ReplyType>(std::move(reply), "request");
    int errno_value = expected ? 0 : expected.error().errno_value();
    UNSCOPED_INFO("reply: " << protocol::name_of(status) << ": "
                            << (expected ? "" : expected.error().message()));
    return {status, errno_value};
}

using Pair = std::pair<Status, int>;

// Whether libfabric finds an RDMA device here (not on CI).
bool verbs_present() {
    const auto providers = fabric::available_providers();
    return std::find(providers.begin(), providers.end(), "verbs") != providers.end();
}

// A create of a one-part pool.set on `host`, asking for `provider`; the client stays connected
// so that the test sees the host with the session still open.
struct ProviderCreate {
    std::unique_ptr<channel::Client> client;
    Pair outcome;
};
ProviderCreate create_asking_for(TargetHost& host, protocol::ProviderPreference provider) {
    host.write_set("pool.set", "pool", 1);
    ProviderCreate create{host.client(), {}};
    auto request = create_request("pool.set");
    request.provider = provider;
    create.outcome = outcome<protocol::CreateReply>(*create.client, request);
    return create;
}

} // namespace

// A client learns the pool set, the step and the reason, never where the server keeps things:
// no '/' that starts a word (an absolute path) and no piece of the test's directories.
void check_no_server_paths(const std::filesystem::path& server_directory) {
    INFO(reply_messages().size() << " reply messages");
    for (const std::string& message : reply_messages()) {
        INFO("reply message: " << message);
        CHECK(message.find(server_directory.string()) == std::string::npos);
        CHECK(message.find(" /") == std::string::npos);
        CHECK(message.find("'/") == std::string::npos);
        CHECK_FALSE(message.starts_with("/"));
    }
    reply_messages().clear();
}

TEST_CASE("statuses of the pool store and the session, one daemon") {
    reply_messages().clear();
    TargetHost host;
    host.write_set("pool.set", "pool", 1);
    host.write_set("bare.set", "bare", 1, "NOHDRS");
    auto client = host.client();

    // 0 SUCCESS
    CHECK(outcome<protocol::CreateReply>(*client, create_request("pool.set")) ==
          Pair{Status::ok, 0});
    auto other = host.client();
    // 8 BUSY: the pool is this first session's
    CHECK(outcome<protocol::OpenReply>(*other, open_request("pool.set")) ==
          Pair{Status::busy, EBUSY});
    // 16 ours: a second pool in one session
    CHECK(outcome<protocol::OpenReply>(*client, open_request("bare.set")) ==
          Pair{Status::invalid_request, EINVAL});
    REQUIRE(outcome<protocol::CloseReply>(*client, protocol::CloseRequest{}).first == Status::ok);
    // 16 again: nothing to close
    CHECK(outcome<protocol::CloseReply>(*client, protocol::CloseRequest{}) ==
          Pair{Status::invalid_request, EINVAL});
    // 9 EXISTS: the pool was created before
    CHECK(outcome<protocol::CreateReply>(*client, create_request("pool.set")) ==
          Pair{Status::exists, EEXIST});
    // 2 BADNAME: a name leaving the pool set directory
    CHECK(outcome<protocol::CreateReply>(*client, create_request("../pool.set")) ==
          Pair{Status::bad_name, EINVAL});
    // 3 BADSIZE: the remote pool is smaller than the initiator's
    auto big = open_request("pool.set");
    big.pool_size = 1ull << 30;
    CHECK(outcome<protocol::OpenReply>(*client, big) == Pair{Status::bad_size, EFBIG});
    // 4 BADNLANES
    CHECK(outcome<protocol::CreateReply>(*client, create_request("pool.set", 0)) ==
          Pair{Status::bad_lanes, EINVAL});
    // 11 NOEXIST: no such set file
    CHECK(outcome<protocol::OpenReply>(*client, open_request("missing.set")) ==
          Pair{Status::no_exist, ENOENT});
    // 12 NOACCESS: a set file anyone may rewrite is not trusted
    host.write_set("open.set", "open", 1);
    std::filesystem::permissions(host.sets_dir() + "/open.set",
                                 std::filesystem::perms::others_write,
                                 std::filesystem::perm_options::add);
    CHECK(outcome<protocol::CreateReply>(*client, create_request("open.set")) ==
          Pair{Status::no_access, EACCES});
    // 13 POOL_CFG: a target set may not have replicas
    host.write_set("replicated.set",
                   pool_set_text(host.dir().path(), "r", 1) + "REPLICA otherhost remote.set\n");
    CHECK(outcome<protocol::CreateReply>(*client, create_request("replicated.set")) ==
          Pair{Status::pool_config, EINVAL});
    // 6 FATAL: a part path that cannot be a file (a component is a regular file)
    host.dir().write("plainfile", "x");
    host.write_set("broken.set",
                   "PMEMPOOLSET\n2M " + (host.dir() / "plainfile/part").string() + "\n");
    CHECK(outcome<protocol::CreateReply>(*client, create_request("broken.set")) ==
          Pair{Status::fatal, EREMOTEIO});
    // 18 ours: set_attr on a pool without headers
    auto bare = create_request("bare.set");
    bare.attributes = {};
    REQUIRE(outcome<protocol::CreateReply>(*client, bare).first == Status::ok);
    CHECK(
        outcome<protocol::SetAttrReply>(*client, protocol::SetAttrRequest{pmemobj_attributes()}) ==
        Pair{Status::not_supported, EOPNOTSUPP});
    REQUIRE(outcome<protocol::CloseReply>(*client, protocol::CloseRequest{}).first == Status::ok);
    // 9 EXISTS of a part that holds data: a new set file over pool.set's part
    host.write_set("overlap.set",
                   "PMEMPOOLSET\nOPTION NOHDRS\n2M " + (host.dir() / "pool.0").string() + "\n");
    auto overlap = create_request("overlap.set");
    overlap.attributes = {};
    CHECK(outcome<protocol::CreateReply>(*client, overlap) == Pair{Status::exists, EEXIST});
    // 13 POOL_CFG: zero attributes for a set with headers
    auto zero = create_request("fresh.set");
    host.write_set("fresh.set", "fresh", 1);
    zero.attributes = {};
    CHECK(outcome<protocol::CreateReply>(*client, zero) == Pair{Status::pool_config, EINVAL});

    REQUIRE(reply_messages().size() >= 15);
    check_no_server_paths(host.dir().path());
}

TEST_CASE("statuses of the provider choice") {
    SECTION("5 BADPROVIDER: the client asks for a provider this host cannot open") {
        TargetHost host;
        const auto create = create_asking_for(host, protocol::ProviderPreference::verbs);
        const auto [status, errno_value] = create.outcome;
        if (!verbs_present()) {
            // No RDMA device here (CI): verbs cannot be opened.
            CHECK(Pair{status, errno_value} == Pair{Status::bad_provider, EINVAL});
            CHECK_FALSE(std::filesystem::exists(host.dir() / "pool.0")); // created, then removed
        } else if (status == Status::ok) {
            // A device serves it: the pool is there, and BADPROVIDER cannot be provoked.
            CHECK(std::filesystem::exists(host.dir() / "pool.0"));
        } else {
            // A device that cannot serve rpmemd's fabric address: refused, nothing left behind.
            CHECK((status == Status::bad_provider || status == Status::fatal_connection));
            CHECK_FALSE(std::filesystem::exists(host.dir() / "pool.0"));
        }
    }
    SECTION("10 PROVNOSUP: the operator does not offer it, or offers none that works") {
        TargetHost host({.config_lines = {"allow-provider = sockets"}});
        CHECK(create_asking_for(host, protocol::ProviderPreference::tcp).outcome ==
              Pair{Status::provider_unsupported, EMEDIUMTYPE});

        TargetHost verbs_only({.config_lines = {"allow-provider = verbs"}});
        verbs_only.write_set("pool.set", "pool", 1);
        auto verbs_client = verbs_only.client();
        auto [status, errno_value] =
            outcome<protocol::CreateReply>(*verbs_client, create_request("pool.set"));
        // Where verbs is present and serves, the one provider offered works.
        if (!verbs_present() || status != Status::ok)
            CHECK(Pair{status, errno_value} == Pair{Status::provider_unsupported, EMEDIUMTYPE});
    }
    SECTION("7 FATAL_CONN: the fabric listener cannot be set up") {
        // 192.0.2.1 (TEST-NET-1) is never an address of this host.
        TargetHost host({.config_lines = {"fabric-address = 192.0.2.1"}});
        const auto create = create_asking_for(host, protocol::ProviderPreference::tcp);
        CHECK(create.outcome == Pair{Status::fatal_connection, ECONNABORTED});
        check_no_server_paths(host.dir().path());
    }
}

TEST_CASE("statuses of the channel") {
    SECTION("1 BADPROTO: no common protocol version") {
        TargetHost host;
        auto raw = RawTlsClient::connect(host.port(), host.credentials().client());
        REQUIRE(raw);
        REQUIRE(raw->send(protocol::Hello{.min_version = 90, .max_version = 99}, 1));
        auto reply = raw->receive(kPatience);
        REQUIRE(reply);
        auto* hello = std::get_if<protocol::HelloReply>(&reply->message);
        REQUIRE(hello != nullptr);
        CHECK(hello->status == Status::protocol_mismatch);
        CHECK(protocol::errno_of(hello->status) == EPROTONOSUPPORT);
        CHECK_THAT(hello->message, Catch::Contains("90..99"));
    }
    SECTION("14 ours: the client identity is not allowed") {
        TargetHost host({.config_lines = {"allow-client = bob carol"}});
        auto client = host.connect();
        REQUIRE_FALSE(client);
        CHECK(client.error().errno_value() == EPERM);
        CHECK_THAT(client.error().message(), Catch::Contains("alice"));
    }
    SECTION("15 ours: a malformed request body") {
        TargetHost host;
        auto raw = RawTlsClient::connect(host.port(), host.credentials().client());
        REQUIRE(raw);
        REQUIRE(raw->hello());
        // An open request whose body ends in the middle of its pool size field.
        auto frame = protocol::encode(protocol::Request(open_request("pool.set")), 7);
        REQUIRE(frame);
        std::size_t cut = 4;
        frame->resize(frame->size() - cut - 4);
        auto header =
            protocol::decode_frame_header(
                std::span<const std::uint8_t, protocol::kFrameHeaderSize>(frame->data(), 16))
                .result;
        REQUIRE(header);
        header->body_length -= static_cast<std::uint32_t>(cut + 4);
        auto bytes = protocol::encode_frame_header(*header);
        std::copy(bytes.begin(), bytes.end(), frame->begin());
        REQUIRE(raw->send(*frame));
        auto reply = raw->receive(kPatience);
        REQUIRE(reply);
        CHECK(protocol::reply_status(reply->message) == Status::bad_message);
        CHECK(protocol::errno_of(Status::bad_message) == EPROTO);
    }
}
