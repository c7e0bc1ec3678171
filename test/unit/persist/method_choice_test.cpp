// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>

#include <catch2/catch.hpp>

#include "persist/method_choice.h"

using namespace rpmem::persist;
using rpmem::protocol::PersistMethod;

namespace {

const ProviderTraits kTcp{.software = true, .offers_rma_pmem = true};
const ProviderTraits kSocketsWithoutPmem{.software = true, .offers_rma_pmem = false};
const ProviderTraits kVerbs{.software = false, .offers_rma_pmem = false};
const MethodPolicy kEverythingAllowed{.allow_apm = true, .allow_gpspm = true, .allow_commit = true};

} // namespace

TEST_CASE("APM is never chosen on a software provider unless the target declares eADR") {
    for (bool bypass : {false, true}) {
        for (const ProviderTraits& provider : {kTcp, kSocketsWithoutPmem}) {
            Platform adr{.domain = PersistenceDomain::adr, .nic_writes_bypass_cache = bypass};
            auto preferred =
                choose_method(adr, provider, true, kEverythingAllowed, PersistMethod::apm);
            REQUIRE(preferred);
            CHECK(preferred->method != PersistMethod::apm);
            CHECK_THAT(preferred->reason, Catch::Contains("visibility, not durability"));

            auto unpreferred =
                choose_method(adr, provider, true, kEverythingAllowed, PersistMethod::any);
            REQUIRE(unpreferred);
            CHECK(unpreferred->method != PersistMethod::apm);
        }
    }
    Platform eadr{.domain = PersistenceDomain::eadr};
    auto choice = choose_method(eadr, kTcp, true, kEverythingAllowed, PersistMethod::apm);
    REQUIRE(choice);
    CHECK(choice->method == PersistMethod::apm);
}

TEST_CASE("APM on hardware needs non-allocating NIC writes or eADR, and a pmem pool") {
    Platform adr_bypass{.domain = PersistenceDomain::adr, .nic_writes_bypass_cache = true};
    Platform adr_cached{.domain = PersistenceDomain::adr, .nic_writes_bypass_cache = false};

    auto good = choose_method(adr_bypass, kVerbs, true, kEverythingAllowed, PersistMethod::any);
    REQUIRE(good);
    CHECK(good->method == PersistMethod::apm);

    auto cached = choose_method(adr_cached, kVerbs, true, kEverythingAllowed, PersistMethod::any);
    REQUIRE(cached);
    CHECK(cached->method == PersistMethod::gpspm);

    auto not_pmem =
        choose_method(adr_bypass, kVerbs, false, kEverythingAllowed, PersistMethod::apm);
    REQUIRE(not_pmem);
    CHECK(not_pmem->method == PersistMethod::gpspm);
    CHECK_THAT(not_pmem->reason, Catch::Contains("persistent memory"));
}

TEST_CASE("commit needs FI_RMA_PMEM and a pmem pool; it is preferred when valid") {
    Platform adr;
    auto on_pmem = choose_method(adr, kTcp, true, kEverythingAllowed, PersistMethod::any);
    REQUIRE(on_pmem);
    CHECK(on_pmem->method == PersistMethod::commit);

    auto on_disk = choose_method(adr, kTcp, false, kEverythingAllowed, PersistMethod::any);
    REQUIRE(on_disk);
    CHECK(on_disk->method == PersistMethod::gpspm);

    auto no_pmem_caps =
        choose_method(adr, kSocketsWithoutPmem, true, kEverythingAllowed, PersistMethod::any);
    REQUIRE(no_pmem_caps);
    CHECK(no_pmem_caps->method == PersistMethod::gpspm);
}

TEST_CASE("the client's valid preference wins over the default order") {
    auto choice = choose_method(Platform{}, kTcp, true, kEverythingAllowed, PersistMethod::gpspm);
    REQUIRE(choice);
    CHECK(choice->method == PersistMethod::gpspm);
    CHECK_THAT(choice->reason, Catch::Contains("client asked"));
}

TEST_CASE("the reason names the faster methods passed over and the key that would allow them") {
    MethodPolicy general_only{
        .allow_apm = false, .allow_gpspm = true, .allow_commit = false, .keys_named = true};
    auto choice = choose_method(Platform{}, kTcp, true, general_only, PersistMethod::any);
    REQUIRE(choice);
    CHECK(choice->method == PersistMethod::gpspm);
    CHECK_THAT(choice->reason, Catch::Contains("passed over") &&
                                   Catch::Contains("not persist-commit = yes") &&
                                   Catch::Contains("not persist-apm = yes"));

    auto by_default = choose_method(Platform{}, kSocketsWithoutPmem, true, MethodPolicy{}, {});
    REQUIRE(by_default);
    CHECK(by_default->method == PersistMethod::gpspm);
    CHECK_THAT(by_default->reason, Catch::Contains("apm is off by default (persist-apm = yes"));
}

TEST_CASE("the policy can forbid methods, and forbidding every valid one is an error") {
    MethodPolicy gpspm_only{.allow_apm = false, .allow_gpspm = true, .allow_commit = false};
    auto choice = choose_method(Platform{}, kTcp, true, gpspm_only, PersistMethod::commit);
    REQUIRE(choice);
    CHECK(choice->method == PersistMethod::gpspm);
    CHECK_THAT(choice->reason, Catch::Contains("persist-commit"));

    MethodPolicy nothing{.allow_apm = true, .allow_gpspm = false, .allow_commit = true};
    auto none = choose_method(Platform{}, kSocketsWithoutPmem, false, nothing, {});
    REQUIRE_FALSE(none);
    CHECK(none.error().errno_value() == EMEDIUMTYPE);
    CHECK_THAT(none.error().message(), Catch::Contains("persist-general"));
}

TEST_CASE("with replies only (inject-reply-delay) gpspm is chosen, and a preference for "
          "another method is refused saying why") {
    MethodPolicy delayed = kEverythingAllowed;
    delayed.replies_only = true;
    Platform eadr{.domain = PersistenceDomain::eadr};
    auto chosen = choose_method(eadr, kTcp, true, delayed, PersistMethod::any);
    REQUIRE(chosen);
    CHECK(chosen->method == PersistMethod::gpspm);
    CHECK_THAT(chosen->reason, Catch::Contains("inject-reply-delay"));
    for (PersistMethod preferred : {PersistMethod::commit, PersistMethod::apm}) {
        auto refused = choose_method(eadr, kTcp, true, delayed, preferred);
        REQUIRE(refused);
        CHECK(refused->method == PersistMethod::gpspm);
        CHECK_THAT(refused->reason, Catch::Contains("client preference refused: inject-reply"));
    }
}
