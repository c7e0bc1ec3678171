// SPDX-License-Identifier: BSD-3-Clause
// Provider selection against the libfabric installed here (fi_getinfo only: no connection).
#include <algorithm>
#include <cerrno>

#include <catch2/catch.hpp>

#include "fabric/provider.h"

using namespace rpmem::fabric;

namespace {

bool present(const std::string& name) {
    const auto names = available_providers();
    return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

TEST_CASE("tcp and sockets are available here, without utility providers", "[fabric][provider]") {
    const auto names = available_providers();
    CHECK(present("tcp"));
    CHECK(present("sockets"));
    for (const std::string& name : names) {
        CHECK_FALSE(name.starts_with("ofi_"));
        CHECK(name.find(';') == std::string::npos);
    }
    CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("verbs is preferred first, then tcp, then sockets", "[fabric][provider]") {
    REQUIRE(kPreferredProviders.size() == 3);
    CHECK(kPreferredProviders[0] == "verbs");
    CHECK(kPreferredProviders[1] == "tcp");
    CHECK(kPreferredProviders[2] == "sockets");
}

TEST_CASE("asking for a provider that is not here names it and lists those that are",
          "[fabric][provider]") {
    // This machine has no RDMA device, so verbs is absent (a host with one skips this).
    if (present("verbs")) {
        WARN("verbs is present on this host: nothing to check");
        return;
    }
    auto chosen = select_provider({"verbs", Role::connector, "127.0.0.1", "7636"});
    REQUIRE_FALSE(chosen);
    const rpmem::Error& error = chosen.error();
    CHECK(error.errno_value() == ENODEV);
    CHECK_THAT(error.message(), Catch::Contains("\"verbs\" is not available"));
    CHECK_THAT(error.message(), Catch::Contains("tcp"));
    CHECK_THAT(error.message(), Catch::Contains("sockets"));

    auto bogus = select_provider({"no-such-provider", Role::listener, "127.0.0.1", "0"});
    REQUIRE_FALSE(bogus);
    CHECK(bogus.error().errno_value() == ENODEV);
    CHECK_THAT(bogus.error().message(), Catch::Contains("no-such-provider"));
}

TEST_CASE("without a name the best present provider is chosen", "[fabric][provider]") {
    auto chosen = select_provider({"", Role::connector, "127.0.0.1", "7636"});
    REQUIRE(chosen);
    const std::string expected = present("verbs") ? "verbs" : "tcp";
    CHECK(chosen->capabilities.provider == expected);
}

TEST_CASE("tcp offers what the persistence methods need", "[fabric][provider]") {
    auto chosen = select_provider({"tcp", Role::listener, "127.0.0.1", "0"});
    REQUIRE(chosen);
    const Capabilities& caps = chosen->capabilities;
    INFO(caps.describe());
    CHECK(caps.provider == "tcp");
    CHECK(caps.software);
    CHECK(caps.rma_pmem);
    CHECK(caps.commit_complete);
    CHECK(caps.read_after_write);
    CHECK(caps.send_after_write);
    CHECK(caps.tx_depth > 0);
    CHECK(caps.rx_depth > 0);
    CHECK(caps.max_endpoints >= 64);
    CHECK(caps.max_msg_size >= (std::uint64_t{1} << 20));
    CHECK(chosen->info->next == nullptr);
    REQUIRE(chosen->info->src_addr != nullptr);
}

TEST_CASE("sockets reports its small domain and manual progress", "[fabric][provider]") {
    auto chosen = select_provider({"sockets", Role::connector, "127.0.0.1", "7636"});
    REQUIRE(chosen);
    const Capabilities& caps = chosen->capabilities;
    INFO(caps.describe());
    CHECK(caps.provider == "sockets");
    CHECK(caps.manual_progress);
    CHECK(caps.commit_complete);
    CHECK_FALSE(caps.rma_pmem);
    CHECK(caps.max_endpoints >= 8);
    CHECK(caps.max_endpoints <= 128);
    REQUIRE(chosen->info->dest_addr != nullptr);
}
