// SPDX-License-Identifier: BSD-3-Clause
// Tenancy of pool sets (DESIGN.md, security model): with the default config each client
// identity sees only the pool sets it created. Another identity's open, create, remove, digest
// and info (rpmemctl info is an open) get, byte for byte, the answer a missing set gets, also
// while the owner has the set open (never "busy"); sharing is explicit config.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "channel/client.h"
#include "control_requests.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using protocol::Status;

namespace {

// What the daemon answers: the reply's type, status and message, for comparing answers.
struct Answer {
    std::string type;
    Status status = Status::ok;
    std::string message;
    friend bool operator==(const Answer&, const Answer&) = default;
};

std::ostream& operator<<(std::ostream& out, const Answer& answer) {
    return out << answer.type << " " << protocol::name_of(answer.status) << " '" << answer.message
               << "'";
}

Answer ask(channel::Client& client, const protocol::Request& request) {
    auto reply = client.call(request);
    INFO((reply ? std::string() : reply.error().message()));
    REQUIRE(reply);
    return {std::string(protocol::name_of(protocol::type_of(*reply))),
            protocol::reply_status(*reply), protocol::reply_message(*reply)};
}

// Every request by which one identity could reach a pool set: open (also rpmemctl info),
// digest (needs an open pool), create over it, remove it.
std::vector<Answer> probe(channel::Client& client, const std::string& name) {
    std::vector<Answer> answers;
    answers.push_back(ask(client, open_request(name)));
    answers.push_back(ask(client, protocol::DigestRequest{4096, 4096, 4096}));
    answers.push_back(ask(client, create_request(name)));
    answers.push_back(ask(client, protocol::RemoveRequest{name, false, false}));
    answers.push_back(ask(client, protocol::RemoveRequest{name, true, false}));
    return answers;
}

} // namespace

TEST_CASE("with the default config another identity's pool set answers as a missing one") {
    TargetHost host;
    host.write_set("a.set", "a", 1);
    auto alice = host.client();
    call_ok<protocol::CreateReply>(*alice, create_request("a.set"));
    const std::string part = host.dir() / "a.0";

    auto bob_client = host.connect(host.client_tls("bob"));
    REQUIRE(bob_client);
    channel::Client& bob = **bob_client;
    REQUIRE(bob.hello().identity == "bob");

    // While alice has it open: not even "busy".
    const std::vector<Answer> while_open = probe(bob, "a.set");
    call_ok<protocol::CloseReply>(*alice, protocol::CloseRequest{});
    const std::string header_before = host.dir().read("a.0").substr(0, 4096);
    // Closed: bob may not take it either (the gap of issue 27).
    const std::vector<Answer> while_closed = probe(bob, "a.set");

    // The answers for a set that does not exist, under the same name.
    std::filesystem::rename(host.sets_dir() + "/a.set", host.sets_dir() + "/a.set.away");
    const std::vector<Answer> missing = probe(bob, "a.set");
    std::filesystem::rename(host.sets_dir() + "/a.set.away", host.sets_dir() + "/a.set");

    for (std::size_t i = 0; i < missing.size(); ++i) {
        INFO("request " << i);
        CHECK(while_open[i] == missing[i]);
        CHECK(while_closed[i] == missing[i]);
    }
    CHECK(missing[0].status == Status::no_exist);
    CHECK(missing[2].status == Status::no_exist);
    CHECK(missing[3].status == Status::no_exist);

    // Alice's pool is as she left it, and still hers.
    CHECK(std::filesystem::exists(part));
    CHECK(host.dir().read("a.0").substr(0, 4096) == header_before);
    auto reopened = call_ok<protocol::OpenReply>(*alice, open_request("a.set"));
    CHECK(reopened.attributes == pmemobj_attributes());
    call_ok<protocol::CloseReply>(*alice, protocol::CloseRequest{});

    // Once alice removes it, the set is nobody's: bob may create it, and then it is his.
    call_ok<protocol::RemoveReply>(*alice, protocol::RemoveRequest{"a.set", false, false});
    call_ok<protocol::CreateReply>(bob, create_request("a.set"));
    call_ok<protocol::CloseReply>(bob, protocol::CloseRequest{});
    CHECK(ask(*alice, open_request("a.set")).status == Status::no_exist);
    bob.close();
    alice->close();
    CHECK(host.wait_for_log("of identity 'bob': answered as a missing pool set"));
}

TEST_CASE("shared-pool-set lets the identities it names use one set") {
    TargetHost::Options options;
    options.config_lines = {"shared-pool-set = s.set alice bob"};
    TargetHost host(options);
    host.write_set("s.set", "s", 1);
    host.write_set("p.set", "p", 1);
    auto alice = host.client();
    call_ok<protocol::CreateReply>(*alice, create_request("s.set"));
    call_ok<protocol::CloseReply>(*alice, protocol::CloseRequest{});
    call_ok<protocol::CreateReply>(*alice, create_request("p.set"));
    call_ok<protocol::CloseReply>(*alice, protocol::CloseRequest{});

    auto bob = host.connect(host.client_tls("bob"));
    REQUIRE(bob);
    auto opened = call_ok<protocol::OpenReply>(**bob, open_request("s.set"));
    CHECK(opened.attributes == pmemobj_attributes());
    // Busy for alice now: the set is shared, so its users may know of each other.
    CHECK(ask(*alice, open_request("s.set")).status == Status::busy);
    call_ok<protocol::CloseReply>(**bob, protocol::CloseRequest{});
    // Sharing names one set, not all of alice's.
    CHECK(ask(**bob, open_request("p.set")).status == Status::no_exist);
    // carol is not named.
    auto carol = host.connect(host.client_tls("carol"));
    REQUIRE(carol);
    CHECK(ask(**carol, open_request("s.set")).status == Status::no_exist);
}
