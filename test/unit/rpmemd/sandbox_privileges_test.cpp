// SPDX-License-Identifier: BSD-3-Clause
// The worker sandbox's privilege drop, in forked children: run as root, the worker's user and
// group replace root for good; run as another user, a switch to a third one is refused (that
// user is made in a child by dropping root first). Needs root; elsewhere meson reports the test
// skipped.
#include <cerrno>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "precondition.h"
#include "rpmemd/worker/sandbox.h"
#include "sandbox_test_support.h"

using namespace rpmem;
using namespace rpmem::daemon;
using namespace rpmem::test;

std::optional<std::string> rpmem::test::missing_precondition() {
    return missing_root();
}

namespace {

constexpr uid_t kNobody = 65534;

// "" when every real, effective and saved id and the one supplementary group are `id`.
std::string ids_are(unsigned id) {
    uid_t r = 0, e = 0, s = 0;
    gid_t rg = 0, eg = 0, sg = 0;
    ::getresuid(&r, &e, &s);
    ::getresgid(&rg, &eg, &sg);
    if (r != id || e != id || s != id || rg != id || eg != id || sg != id)
        return fmt::format("ids are {}/{}/{} {}/{}/{}", r, e, s, rg, eg, sg);
    gid_t groups[8];
    int count = ::getgroups(8, groups);
    if (count != 1 || groups[0] != id)
        return fmt::format("{} supplementary groups", count);
    return "";
}

// As run_sandboxed, in a child that is not root: root drops to nobody first, as an
// unprivileged rpmemd would run.
ChildOutcome run_as_nobody(const SandboxOptions& options, const ChildBody& body) {
    return run_sandboxed(options, body, []() -> std::string {
        const gid_t group = kNobody;
        if (::setgroups(1, &group) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
            ::setresuid(kNobody, kNobody, kNobody) != 0)
            return fmt::format("becoming nobody: {}", std::strerror(errno));
        return "";
    });
}

} // namespace

TEST_CASE("running as root, the worker's user and group replace root for good",
          "[sandbox][privileges]") {
    const bool filter = GENERATE(true, false);
    SandboxOptions options;
    options.uid = kNobody;
    options.gid = kNobody;
    options.filter_system_calls = filter;
    expect_success(run_sandboxed(options, [](const SandboxReport& report) -> std::string {
        if (!report.dropped_privileges)
            return "the report says nothing was dropped";
        RETURN_IF(ids_are(kNobody));
        RETURN_IF(expect_errno("setuid(0)", ::setuid(0), EPERM));
        RETURN_IF(expect_errno("setgid(0)", ::setgid(0), EPERM));
        return "";
    }));
}

TEST_CASE("running as root, the worker's capability bounding set is emptied",
          "[sandbox][privileges]") {
    SandboxOptions options;
    options.uid = kNobody;
    options.gid = kNobody;
    expect_success(run_sandboxed(options, [](const SandboxReport& report) -> std::string {
        if (!report.emptied_bounding_set)
            return "the report says the bounding set was left";
        for (int capability = 0;; ++capability) {
            int held = ::prctl(PR_CAPBSET_READ, capability, 0, 0, 0);
            if (held < 0)
                return capability > 0 ? "" : "PR_CAPBSET_READ refused";
            if (held != 0)
                return fmt::format("capability {} is still in the bounding set", capability);
        }
    }));
}

TEST_CASE("running as another user, only that user's own ids are accepted",
          "[sandbox][privileges]") {
    SandboxOptions options;
    SECTION("a switch to a third user is refused") {
        options.uid = kNobody - 1;
        options.gid = kNobody - 1;
        const ChildOutcome outcome = run_as_nobody(options, [](const SandboxReport&) {
            return std::string("switched users without being root");
        });
        CHECK(outcome.message.find("cannot switch") != std::string::npos);
    }
    SECTION("its own ids are kept") {
        options.uid = kNobody;
        options.gid = kNobody;
        expect_success(run_as_nobody(options, [](const SandboxReport& report) -> std::string {
            if (report.dropped_privileges)
                return "the report says privileges were dropped";
            return ids_are(kNobody);
        }));
    }
}
