// SPDX-License-Identifier: BSD-3-Clause
// PoolStore::create on a file system too small for the parts: a 3 MiB tmpfs in a mount
// namespace of a forked child's own, so neither the test process nor anything outside sees it.
// Needs CAP_SYS_ADMIN (root on CI); elsewhere meson reports the test skipped.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <sched.h>
#include <sys/mount.h>

#include "pool_fixtures.h"
#include "precondition.h"
#include "process.h"
#include "rpmemd/supervisor/pool_store.h"
#include "rpmemd/supervisor/status_error.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;
using protocol::Status;
using test::TempDir;

std::optional<std::string> rpmem::test::missing_precondition() {
    return missing_mount_namespace();
}

TEST_CASE("no_space: the parts do not fit on their file system") {
    TempDir dir;
    const std::string small = dir / "small";
    std::filesystem::create_directories(small);
    dir.write("sets/big.set", test::pool_set_text(small, "big", 2));

    const test::ChildOutcome outcome = test::run_in_child([&](int) -> std::string {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=3m") != 0)
            return std::string("mounting a small tmpfs: ") + std::strerror(errno);
        PoolStore store((dir / "sets").string(), {}, default_resolve_method());
        auto created = store.create({"a", "big.set", 0, 1}, test::pmemobj_attributes());
        if (created)
            return "two 2 MiB parts were created on a 3 MiB file system";
        if (const Status status = reply_status_for(created.error()); status != Status::no_space)
            return std::string("status ") + std::string(protocol::name_of(status)) + ": " +
                   created.error().message();
        // What create made is gone again.
        for (const char* part : {"big.0", "big.1"})
            if (std::filesystem::exists(small + "/" + part))
                return std::string(part) + " is left behind";
        return "";
    });
    INFO(outcome.message);
    CHECK(outcome.status == 0);
}
