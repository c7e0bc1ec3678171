// SPDX-License-Identifier: BSD-3-Clause
// A client that vanishes releases its pool: a child process opens a pool through the real
// rpmemd and is then killed (the kernel closes its connection) or frozen (its connection stays
// open but its heartbeat stops). Either way the daemon ends the session, fences and unlocks
// the pool, and another client can open it.
#include <cerrno>
#include <csignal>

#include <catch2/catch.hpp>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel/client.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using protocol::Status;

namespace {

// Forks a child that creates `pool.set` through the daemon, reports success through a pipe and
// then waits to be killed. Returns its pid once the pool is created.
pid_t spawn_pool_holder(TargetHost& host) {
    std::uint16_t port = host.port();
    channel::TlsFiles tls = host.credentials().client();
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    // No other thread runs in this process here, so the child may use the full library.
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(ready[0]);
        channel::ClientConfig config;
        config.host = "127.0.0.1";
        config.port = port;
        config.tls = tls;
        auto client = channel::Client::connect(config);
        char verdict = 'f';
        if (client) {
            protocol::CreateRequest create;
            create.pool_set = "pool.set";
            create.lanes = 1;
            create.attributes = pmemobj_attributes();
            auto created =
                channel::expect<protocol::CreateReply>((*client)->call(create), "create");
            if (created)
                verdict = 'k';
        }
        (void)::write(ready[1], &verdict, 1);
        for (;;)
            ::pause();
    }
    ::close(ready[1]);
    pollfd p{ready[0], POLLIN, 0};
    REQUIRE(::poll(&p, 1, static_cast<int>(kPatience.count())) == 1);
    char verdict = 0;
    REQUIRE(::read(ready[0], &verdict, 1) == 1);
    ::close(ready[0]);
    REQUIRE(verdict == 'k');
    return pid;
}

void reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

void check_open_works(TargetHost& host) {
    auto client = host.client();
    protocol::OpenRequest open;
    open.pool_set = "pool.set";
    open.lanes = 1;
    auto opened = channel::expect<protocol::OpenReply>(client->call(open), "open");
    INFO((opened ? std::string() : opened.error().message()));
    REQUIRE(opened);
    CHECK(opened->attributes == pmemobj_attributes());
}

} // namespace

TEST_CASE("a killed client's pool is released") {
    TargetHost host;
    host.write_set("pool.set", "pool", 1);
    pid_t holder = spawn_pool_holder(host);

    auto observer = host.client();
    protocol::OpenRequest open;
    open.pool_set = "pool.set";
    open.lanes = 1;
    auto busy = observer->call(open);
    REQUIRE(busy);
    CHECK(protocol::reply_status(*busy) == Status::busy);

    reap(holder);
    // The session's last line, written once the pool is unlocked.
    REQUIRE(host.wait_for_log("session 1 (alice@127.0.0.1:"));
    REQUIRE(host.wait_for_log("pool set 'pool.set' closed"));
    check_open_works(host);
    std::string log = host.dir().read("rpmemd.log");
    CHECK_THAT(log, Catch::Contains("releasing pool set 'pool.set' of the closed channel"));
    // A killed client sends no close_notify; the log says so rather than "closed the channel".
    CHECK_THAT(log, Catch::Contains("without a TLS close_notify"));
}

TEST_CASE("a frozen client's pool is released when its heartbeat stops") {
    // Its connection stays open: only the heartbeat deadline can end the session.
    TargetHost host({.config_lines = {"heartbeat = 2s"}});
    host.write_set("pool.set", "pool", 1);
    pid_t holder = spawn_pool_holder(host);
    REQUIRE(::kill(holder, SIGSTOP) == 0);

    REQUIRE(host.wait_for_log("pool set 'pool.set' closed"));
    check_open_works(host);
    std::string log = host.dir().read("rpmemd.log");
    CHECK_THAT(log, Catch::Contains("closed channel (no frame from the client for 2000 ms"));
    CHECK_THAT(log, Catch::Contains("releasing pool set 'pool.set' of the closed channel"));
    reap(holder);
}
