// SPDX-License-Identifier: BSD-3-Clause
// This executable does not link libfabric, so the first FabricLibrary::load() below is the load
// of libfabric.so.1 and its dependencies (libpsm_infinipath, libinfinipath on Debian) into it.
#include <csignal>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>
#include <rdma/fi_errno.h>

#include "fabric/fabric_library.h"
#include "fabric/host_process_guard.h"
#include "fabric/provider.h"

using namespace rpmem::fabric;

namespace {

extern "C" void host_handler(int) {}

struct sigaction disposition(int signal) {
    struct sigaction action {};
    REQUIRE(sigaction(signal, nullptr, &action) == 0);
    return action;
}

} // namespace

TEST_CASE("the guard puts back a disposition changed after it was made, and only that",
          "[fabric][guard]") {
    struct sigaction original = disposition(SIGUSR1);
    HostProcessGuard guard;
    struct sigaction foreign {};
    foreign.sa_handler = host_handler;
    REQUIRE(sigaction(SIGUSR1, &foreign, nullptr) == 0);
    const sigset_t restored = guard.restore();
    CHECK(sigismember(&restored, SIGUSR1) == 1);
    CHECK(sigismember(&restored, SIGUSR2) == 0);
    CHECK(disposition(SIGUSR1).sa_handler == original.sa_handler);
    // Nothing changed since: a second restore does nothing.
    const sigset_t again = guard.restore();
    CHECK(sigismember(&again, SIGUSR1) == 0);
}

TEST_CASE("loading libfabric leaves the host's signal dispositions as they were",
          "[fabric][library]") {
    // The host's own crash handler must survive, and so must SIG_DFL where the host had it.
    struct sigaction host {};
    host.sa_handler = host_handler;
    REQUIRE(sigaction(SIGBUS, &host, nullptr) == 0);
    const int watched[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM};
    struct sigaction before[std::size(watched)];
    for (std::size_t i = 0; i < std::size(watched); ++i)
        before[i] = disposition(watched[i]);

    REQUIRE(FabricLibrary::loaded() == nullptr);
    auto library = FabricLibrary::load();
    REQUIRE(library);
    CHECK(FabricLibrary::loaded() == *library);
    // The first fi_getinfo initializes every provider.
    (void)available_providers();

    for (std::size_t i = 0; i < std::size(watched); ++i) {
        INFO("signal " << watched[i]);
        CHECK(disposition(watched[i]).sa_handler == before[i].sa_handler);
        // (glibc adds SA_RESTORER to a disposition it installs, as the guard does.)
        CHECK((disposition(watched[i]).sa_flags & ~0x04000000) ==
              (before[i].sa_flags & ~0x04000000));
    }
    // Once loaded, error texts are libfabric's own, also for its codes above the errno range.
    CHECK(std::string(fabric_strerror(FI_ETOOSMALL)) == (*library)->strerror(FI_ETOOSMALL));
    CHECK(std::string(fabric_strerror(FI_ETOOSMALL)).find("not loaded") == std::string::npos);
    CHECK(std::string(fabric_strerror(FI_ENOMEM)) == std::strerror(ENOMEM));
}
