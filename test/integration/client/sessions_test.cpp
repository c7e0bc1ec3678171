// SPDX-License-Identifier: BSD-3-Clause
// librpmem.so.1's C entry points against a real rpmemd: an open the target refuses, a clean
// create/persist/close as the target logs it, PMDK's argument rules on an open pool with a
// header (EINVAL, never sticky), attributes through open and set_attr, and a target where
// nothing listens.
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "librpmem.h"
#include "pool_memory.h"
#include "target_host.h"

using rpmem::test::apply_environment;
using rpmem::test::kPoolSize;
using rpmem::test::pool_memory;
using rpmem::test::TargetHost;

namespace {

// librpmem reads its settings (RPMEM_TLS_*) from the environment once per process, at its first
// create/open/remove; so this file has one test case, with one host whose credentials it uses.
void use_credentials_of(const TargetHost& host) {
    apply_environment(host.client_environment());
}

void expect_einval(const char* what, int result) {
    INFO(what << ": " << rpmem_errormsg());
    CHECK(result != 0);
    CHECK(errno == EINVAL);
}

// PMDK's argument rules on an open pool with a header: each breach is EINVAL naming the call,
// and none of them breaks the pool (only data-path errors are sticky).
void check_argument_rules(const std::string& target, void* pool) {
    rpmem_pool_attr attributes{};
    std::memcpy(attributes.signature, "RULES", 6);
    attributes.major = 1;
    // Every UUID given (rpmemd makes up the ones left zero, as PMDK did).
    std::memset(attributes.poolset_uuid, 0x11, sizeof attributes.poolset_uuid);
    std::memset(attributes.uuid, 0x22, sizeof attributes.uuid);
    std::memset(attributes.next_uuid, 0x33, sizeof attributes.next_uuid);
    std::memset(attributes.prev_uuid, 0x44, sizeof attributes.prev_uuid);
    unsigned lanes = 2;
    RPMEMpool* rpp =
        rpmem_create(target.c_str(), "header.set", pool, kPoolSize, &lanes, &attributes);
    INFO(rpmem_errormsg());
    REQUIRE(rpp != nullptr);
    REQUIRE(lanes == 2);

    expect_einval("persist inside the header", rpmem_persist(rpp, 0, 8, 0, 0));
    expect_einval("persist on a lane not granted", rpmem_persist(rpp, 4096, 8, lanes, 0));
    expect_einval("persist with unknown flags", rpmem_persist(rpp, 4096, 8, 0, 0x8));
    expect_einval("persist past the end", rpmem_persist(rpp, kPoolSize - 8, 16, 0, 0));
    expect_einval("flush inside the header", rpmem_flush(rpp, 8, 8, 0, 0));
    expect_einval("drain with unknown flags", rpmem_drain(rpp, 0, 2));
    expect_einval("deep persist past the end", rpmem_deep_persist(rpp, kPoolSize, 8, 0));
    char buffer[16];
    expect_einval("read past the end", rpmem_read(rpp, buffer, kPoolSize - 8, 16, 0));
    expect_einval("read on a lane not granted", rpmem_read(rpp, buffer, 4096, 8, lanes));
    CHECK_THAT(rpmem_errormsg(), Catch::Contains("rpmem_read"));

    // Still healthy: a persist and a deep persist on each lane, then the bytes read back.
    for (unsigned lane = 0; lane < lanes; ++lane) {
        char* slot = static_cast<char*>(pool) + 4096 + 64 * lane;
        std::snprintf(slot, 64, "lane %u", lane);
        CHECK(rpmem_persist(rpp, 4096 + 64 * lane, 64, lane, 0) == 0);
        CHECK(rpmem_deep_persist(rpp, 4096 + 64 * lane, 64, lane) == 0);
    }
    // The barrier flag: in synchronous mode it adds nothing to wait for.
    CHECK(rpmem_drain(rpp, 0, RPMEM_DRAIN_REPLICATED) == 0);
    CHECK(rpmem_read(rpp, buffer, 4096 + 64, sizeof buffer, 1) == 0);
    CHECK(std::string(buffer) == "lane 1");
    CHECK(rpmem_close(rpp) == 0);

    // The attributes come back on open as created; the architecture flags left zero are the
    // target's own.
    rpmem_pool_attr opened{};
    rpp = rpmem_open(target.c_str(), "header.set", pool, kPoolSize, &lanes, &opened);
    REQUIRE(rpp != nullptr);
    CHECK(std::memcmp(&opened, &attributes, offsetof(rpmem_pool_attr, user_flags)) == 0);
    const rpmem_pool_attr zero{};
    CHECK(std::memcmp(opened.user_flags, zero.user_flags, sizeof zero.user_flags) != 0);

    // set_attr rewrites them, and the next open returns exactly that.
    opened.major = 2;
    opened.compat_features = 0x1;
    CHECK(rpmem_set_attr(rpp, &opened) == 0);
    CHECK(rpmem_close(rpp) == 0);
    rpmem_pool_attr reopened{};
    rpp = rpmem_open(target.c_str(), "header.set", pool, kPoolSize, &lanes, &reopened);
    REQUIRE(rpp != nullptr);
    CHECK(std::memcmp(&reopened, &opened, sizeof opened) == 0);
    CHECK(rpmem_close(rpp) == 0);
}

} // namespace

TEST_CASE("librpmem: sessions as rpmemd sees them, and a target that is not there") {
    TargetHost host;
    use_credentials_of(host);
    host.write_set("pool.set", "pool", 1, "NOHDRS"); // created without attributes
    auto pool = pool_memory();
    const std::string target = host.target();

    // An open the target refuses: ENOENT, and no close request for a pool never opened.
    unsigned lanes = 1;
    errno = 0;
    CHECK(rpmem_open(target.c_str(), "missing.set", pool.data(), kPoolSize, &lanes, nullptr) ==
          nullptr);
    CHECK(errno == ENOENT);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target) && Catch::Contains("missing.set"));
    REQUIRE(host.wait_for_log("closed: the client closed the channel"));
    CHECK_THAT(host.dir().read("rpmemd.log"), !Catch::Contains("close refused"));

    // create, persist, close: the target logs a clean end of the lanes and of the channel.
    lanes = 2;
    RPMEMpool* rpp =
        rpmem_create(target.c_str(), "pool.set", pool.data(), kPoolSize, &lanes, nullptr);
    INFO(rpmem_errormsg());
    REQUIRE(rpp != nullptr);
    std::memcpy(pool.data() + 4096, "durable", 8);
    CHECK(rpmem_persist(rpp, 4096, 8, 0, 0) == 0);
    CHECK(rpmem_close(rpp) == 0);
    REQUIRE(host.wait_for_log("session 2 (127.0.0.1:"));
    // librpmem shuts its lanes down before the close request; which the worker sees first (the
    // cancelled receives, the shutdown event, or the close request) is the provider's timing.
    REQUIRE(host.wait_for_log("lane 0 closed: "));
    CHECK_THAT(host.dir().read("rpmemd.log"),
               Catch::Contains("lane 0 closed: the initiator disconnected") ||
                   Catch::Contains("lane 0 closed: connection shut down by the peer") ||
                   Catch::Contains("lane 0 closed: the session ended"));
    std::string log = host.dir().read("rpmemd.log");
    CHECK_THAT(log, !Catch::Contains("close_notify"));
    CHECK_THAT(log, !Catch::Contains("Operation canceled"));

    host.write_set("header.set", "header", 1);
    check_argument_rules(target, pool.data());

    // Nothing listens any more: create, open and remove fail with ECONNREFUSED naming the
    // target (an open used to crash here, closing a channel it never had).
    REQUIRE(host.daemon().stop(SIGTERM) == 0);
    errno = 0;
    CHECK(rpmem_open(target.c_str(), "pool.set", pool.data(), kPoolSize, &lanes, nullptr) ==
          nullptr);
    CHECK(errno == ECONNREFUSED);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target));
    errno = 0;
    CHECK(rpmem_create(target.c_str(), "other.set", pool.data(), kPoolSize, &lanes, nullptr) ==
          nullptr);
    CHECK(errno == ECONNREFUSED);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target));
    errno = 0;
    CHECK(rpmem_remove(target.c_str(), "pool.set", 0) != 0);
    CHECK(errno == ECONNREFUSED);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target));
}
