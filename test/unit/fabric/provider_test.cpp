// SPDX-License-Identifier: BSD-3-Clause
// Provider selection against the libfabric installed here (fi_getinfo only: no connection).
#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

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

TEST_CASE("without a name the first preferred provider that serves the request is chosen",
          "[fabric][provider]") {
    const std::vector<std::string> names = available_providers();
    CAPTURE(names);
    // What the choice must come to on this host: the first of kPreferredProviders that is
    // present and can serve 127.0.0.1 when asked for by name (verbs, where a device serves it;
    // tcp on a host without one).
    std::string expected;
    for (const std::string_view preferred : kPreferredProviders) {
        if (!present(std::string(preferred)))
            continue;
        if (select_provider({std::string(preferred), Role::connector, "127.0.0.1", "7636"})) {
            expected = preferred;
            break;
        }
    }
    REQUIRE_FALSE(expected.empty()); // tcp is always here (see the first case)

    auto chosen = select_provider({"", Role::connector, "127.0.0.1", "7636"});
    REQUIRE(chosen);
    CHECK(chosen->capabilities.provider == expected);
    CHECK(present(chosen->capabilities.provider));
    if (!present("verbs"))
        CHECK(chosen->capabilities.provider == "tcp");
}

TEST_CASE("asking for a provider that is not here names it and lists those that are",
          "[fabric][provider]") {
    auto bogus = select_provider({"no-such-provider", Role::listener, "127.0.0.1", "0"});
    REQUIRE_FALSE(bogus);
    CHECK(bogus.error().errno_value() == ENODEV);
    CHECK_THAT(bogus.error().message(), Catch::Contains("\"no-such-provider\" is not available"));
    for (const std::string& name : available_providers())
        CHECK_THAT(bogus.error().message(), Catch::Contains(name));

    // verbs: absent on a host without an RDMA device (then the same error as above); present
    // on one with, and then never reported as not available.
    auto verbs = select_provider({"verbs", Role::connector, "127.0.0.1", "7636"});
    if (present("verbs")) {
        if (!verbs) {
            INFO(verbs.error().message());
            CHECK(verbs.error().errno_value() != ENODEV);
        } else {
            CHECK(verbs->capabilities.provider == "verbs");
        }
    } else {
        REQUIRE_FALSE(verbs);
        const rpmem::Error& error = verbs.error();
        CHECK(error.errno_value() == ENODEV);
        CHECK_THAT(error.message(), Catch::Contains("\"verbs\" is not available"));
        CHECK_THAT(error.message(), Catch::Contains("tcp"));
        CHECK_THAT(error.message(), Catch::Contains("sockets"));
    }
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
