// SPDX-License-Identifier: BSD-3-Clause
// librpmem's sessions as rpmemd sees them: a target that is not there, an open the target
// refuses, and a clean close, each through the C API an application calls.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "librpmem.h"
#include "target_host.h"

using rpmem::test::TargetHost;

namespace {

constexpr std::size_t kPoolSize = 2 * 1024 * 1024; // the size of TargetHost's one-part sets

// librpmem reads its settings (RPMEM_TLS_*) from the environment once per process, at its first
// create/open/remove; so this file has one test case, with one host whose credentials it uses.
void use_credentials_of(const TargetHost& host) {
    for (const auto& [name, value] : host.client_environment())
        REQUIRE(::setenv(name.c_str(), value.c_str(), 1) == 0);
}

struct AlignedFree {
    void operator()(void* memory) const noexcept { std::free(memory); }
};

std::unique_ptr<void, AlignedFree> pool_memory() {
    void* memory = std::aligned_alloc(4096, kPoolSize);
    REQUIRE(memory != nullptr);
    std::memset(memory, 0, kPoolSize);
    return std::unique_ptr<void, AlignedFree>(memory);
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
    CHECK(rpmem_open(target.c_str(), "missing.set", pool.get(), kPoolSize, &lanes, nullptr) ==
          nullptr);
    CHECK(errno == ENOENT);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target) && Catch::Contains("missing.set"));
    REQUIRE(host.wait_for_log("closed: the client closed the channel"));
    CHECK_THAT(host.dir().read("rpmemd.log"), !Catch::Contains("close refused"));

    // create, persist, close: the target logs a clean end of the lanes and of the channel.
    lanes = 2;
    RPMEMpool* rpp =
        rpmem_create(target.c_str(), "pool.set", pool.get(), kPoolSize, &lanes, nullptr);
    INFO(rpmem_errormsg());
    REQUIRE(rpp != nullptr);
    std::memcpy(static_cast<char*>(pool.get()) + 4096, "durable", 8);
    CHECK(rpmem_persist(rpp, 4096, 8, 0, 0) == 0);
    CHECK(rpmem_close(rpp) == 0);
    REQUIRE(host.wait_for_log("session 2 (127.0.0.1:"));
    REQUIRE(host.wait_for_log("lane 0 closed: the initiator disconnected"));
    std::string log = host.dir().read("rpmemd.log");
    CHECK_THAT(log, !Catch::Contains("close_notify"));
    CHECK_THAT(log, !Catch::Contains("Operation canceled"));

    // Nothing listens any more: create, open and remove fail with ECONNREFUSED naming the
    // target (an open used to crash here, closing a channel it never had).
    REQUIRE(host.daemon().stop(SIGTERM) == 0);
    errno = 0;
    CHECK(rpmem_open(target.c_str(), "pool.set", pool.get(), kPoolSize, &lanes, nullptr) ==
          nullptr);
    CHECK(errno == ECONNREFUSED);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target));
    errno = 0;
    CHECK(rpmem_create(target.c_str(), "other.set", pool.get(), kPoolSize, &lanes, nullptr) ==
          nullptr);
    CHECK(errno == ECONNREFUSED);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target));
    errno = 0;
    CHECK(rpmem_remove(target.c_str(), "pool.set", 0) != 0);
    CHECK(errno == ECONNREFUSED);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains(target));
}
