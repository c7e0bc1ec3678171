// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "ssh_command.h"

using rpmem::tools::parse_ssh_command;

namespace {

rpmem::Result<rpmem::tools::RemoveCall> parse(std::vector<std::string_view> args) {
    return parse_ssh_command(args);
}

} // namespace

TEST_CASE("libpmempool's remove call, in the forms it takes") {
    auto plain = parse({"-T", "-oBatchMode=yes", "node1", "rpmemd --remove pool.set --force"});
    REQUIRE(plain);
    CHECK(plain->target.host == "node1");
    CHECK_FALSE(plain->target.port);
    CHECK(plain->pool_set == "pool.set");
    CHECK(plain->force);
    CHECK_FALSE(plain->remove_set_file);

    auto full = parse({"-p", "7000", "-T", "-4", "-oBatchMode=yes", "alice@10.0.0.2",
                       "/usr/bin/rpmemd", "--remove", "dir/pool.set", "--pool-set"});
    REQUIRE(full);
    CHECK(full->target.user == "alice");
    CHECK(full->target.host == "10.0.0.2");
    CHECK(full->target.port == 7000);
    CHECK(full->pool_set == "dir/pool.set");
    CHECK_FALSE(full->force);
    CHECK(full->remove_set_file);

    auto ipv6 = parse({"-p", "7001", "-T", "-oBatchMode=yes", "::1", "rpmemd --remove x.set"});
    REQUIRE(ipv6);
    CHECK(ipv6->target.host == "::1");
    CHECK(ipv6->target.port == 7001);
}

TEST_CASE("anything else is refused with a reason") {
    struct Case {
        std::vector<std::string_view> args;
        const char* expected;
    };
    auto [args, expected] =
        GENERATE(Case{{"-T", "node1", "rpmemd"}, "is not 'rpmemd --remove SET"},
                 Case{{"-T", "node1", "rpmemd --remove"}, "--remove needs a pool set"},
                 Case{{"-T", "node1", "rm -rf / --remove x"}, "unexpected '-rf'"},
                 Case{{"-T", "-X", "node1", "rpmemd --remove x"}, "unknown ssh option '-X'"},
                 Case{{"-T", "-p"}, "option -p needs a port"}, Case{{"-T"}, "expected [user@]host"},
                 Case{{"-p", "99999", "node1", "rpmemd --remove x"}, "destination"});
    auto call = parse(args);
    REQUIRE_FALSE(call);
    CHECK(call.error().errno_value() == EINVAL);
    CHECK_THAT(call.error().message(), Catch::Contains(expected));
}
