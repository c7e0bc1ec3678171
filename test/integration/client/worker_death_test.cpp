// SPDX-License-Identifier: BSD-3-Clause
// A data-path worker that dies ends only its own sessions: the pool's next persist fails with
// ECONNRESET naming the target, rpmemd logs how the worker ended and releases the pool, and
// the next session (a new worker) is served at once, also for the very pool set that was lost.
// The header of a pool is out of the worker's reach: an rpmem_read there is refused up front.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "librpmem.h"
#include "pool_memory.h"
#include "sanitizer.h"
#include "target_host.h"
#include "temp_dir.h"

using rpmem::test::apply_environment;
using rpmem::test::kPoolSize;
using rpmem::test::pool_memory;
using rpmem::test::read_text;
using rpmem::test::TargetHost;

namespace {

std::string fmt_proc_status(pid_t pid) {
    return "/proc/" + std::to_string(pid) + "/status";
}

rpmem_pool_attr test_attributes() {
    rpmem_pool_attr attributes{};
    std::memcpy(attributes.signature, "WORKER", 7);
    attributes.major = 1;
    std::memset(attributes.poolset_uuid, 0x11, sizeof attributes.poolset_uuid);
    std::memset(attributes.uuid, 0x22, sizeof attributes.uuid);
    std::memset(attributes.next_uuid, 0x33, sizeof attributes.next_uuid);
    std::memset(attributes.prev_uuid, 0x44, sizeof attributes.prev_uuid);
    return attributes;
}

} // namespace

TEST_CASE("librpmem: a dead worker ends only its sessions, and rpmemd serves on") {
    TargetHost host;
    apply_environment(host.client_environment());
    host.write_set("lost.set", "lost", 1);
    auto pool = pool_memory();
    const std::string target = host.target();
    rpmem_pool_attr attributes = test_attributes();

    unsigned lanes = 2;
    RPMEMpool* rpp =
        rpmem_create(target.c_str(), "lost.set", pool.data(), kPoolSize, &lanes, &attributes);
    INFO(rpmem_errormsg());
    REQUIRE(rpp != nullptr);
    std::memcpy(pool.data() + 4096, "before", 7);
    REQUIRE(rpmem_persist(rpp, 4096, 8, 0, 0) == 0);

    // The header is not registered for RMA: reading it is refused without breaking the pool.
    char header[8];
    errno = 0;
    CHECK(rpmem_read(rpp, header, 0, sizeof header, 0) != 0);
    CHECK(errno == EINVAL);
    CHECK_THAT(rpmem_errormsg(), Catch::Contains("pool header"));
    char back[8] = {};
    REQUIRE(rpmem_read(rpp, back, 4096, sizeof back, 1) == 0);
    CHECK(std::string(back) == "before");

    REQUIRE(host.wait_for_log("started (pid"));
    pid_t worker = host.last_worker_pid();
    REQUIRE(worker > 0);
    // It is sandboxed and, as rpmemd runs as root here, not root.
    REQUIRE(host.wait_for_log("sandboxed: landlock ABI"));
    CHECK_THAT(host.dir().read("rpmemd.log"), Catch::Contains("seccomp true"));
    if (::geteuid() == 0) {
        std::string status = read_text(fmt_proc_status(worker));
        CHECK_THAT(status, Catch::Contains("Uid:\t65534\t65534\t65534\t65534"));
        CHECK_THAT(status, Catch::Contains("NoNewPrivs:\t1"));
        CHECK_THAT(status, Catch::Contains("Seccomp:\t2"));
    }
    REQUIRE(::kill(worker, SIGSEGV) == 0);

    // The supervisor says how the worker ended and lets go of the pool. Under AddressSanitizer
    // the worker's own SIGSEGV handler reports the signal and aborts.
    REQUIRE(host.wait_for_log(rpmem::test::kAddressSanitizer ? "was killed by signal 6"
                                                             : "was killed by signal 11"));
    REQUIRE(host.wait_for_log("releasing pool set 'lost.set'"));

    // The pool's next persist fails (the lanes went with the worker), naming the target.
    errno = 0;
    CHECK(rpmem_persist(rpp, 4096, 8, 0, 0) != 0);
    CHECK((errno == ECONNRESET || errno == ENOTCONN || errno == EPIPE));
    CHECK_THAT(rpmem_errormsg(), Catch::Contains("127.0.0.1"));
    (void)rpmem_close(rpp);

    // rpmemd is alive and serves the same pool set again at once, with a new worker.
    REQUIRE(::kill(host.daemon().pid(), 0) == 0);
    rpp = rpmem_open(target.c_str(), "lost.set", pool.data(), kPoolSize, &lanes, nullptr);
    INFO(rpmem_errormsg());
    REQUIRE(rpp != nullptr);
    CHECK(host.last_worker_pid() != worker);
    std::memset(back, 0, sizeof back);
    REQUIRE(rpmem_read(rpp, back, 4096, sizeof back, 0) == 0);
    CHECK(std::string(back) == "before");
    std::memcpy(pool.data() + 4096, "after", 6);
    CHECK(rpmem_persist(rpp, 4096, 8, 1, 0) == 0);
    CHECK(rpmem_close(rpp) == 0);
}
