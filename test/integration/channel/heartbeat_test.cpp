// SPDX-License-Identifier: BSD-3-Clause
// Liveness: a client that vanishes or freezes ends its session within the server's heartbeat
// timeout (on_close is called), and a server that freezes or dies is noticed by the client
// within the client's heartbeat timeout. The vanishing and freezing peer is a forked child
// process, killed or stopped with signals and reaped with waitpid.
#include <cerrno>
#include <functional>

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel_test_support.h"

using namespace channel_test;

namespace {

int thread_count() {
    int count = 0;
    if (DIR* dir = ::opendir("/proc/self/task")) {
        while (dirent* entry = ::readdir(dir))
            count += entry->d_name[0] != '.';
        ::closedir(dir);
    }
    return count;
}

// Moves all `size` bytes at `bytes` with `step(bytes, left)`, one read(2) or write(2), each
// time `ready()` allows (the deadline's poll for reads); retries on EINTR, false when the
// descriptor ends or fails first.
template <typename Byte, typename Step, typename Ready>
bool transfer_all(Byte* bytes, std::size_t size, Step step, Ready ready) {
    while (size > 0) {
        if (!ready())
            return false;
        ssize_t n = step(bytes, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

bool write_all(int fd, const void* data, std::size_t size) {
    return transfer_all(
        static_cast<const char*>(data), size,
        [fd](const char* bytes, std::size_t left) { return ::write(fd, bytes, left); },
        [] { return true; });
}

// Reads exactly `size` bytes, waiting at most `timeout` in all.
bool read_all(int fd, void* data, std::size_t size, std::chrono::milliseconds timeout = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const auto readable = [fd, deadline] {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd pfd{fd, POLLIN, 0};
        return left.count() > 0 && ::poll(&pfd, 1, static_cast<int>(left.count())) > 0;
    };
    return transfer_all(
        static_cast<char*>(data), size,
        [fd](char* bytes, std::size_t left) { return ::read(fd, bytes, left); }, readable);
}

// A child process forked while this process has a single thread (so that the child inherits
// no lock held by another thread), with a pipe each way. The child runs `body(in, out)` and
// exits with its result; it never returns into Catch2.
class ChildProcess {
public:
    explicit ChildProcess(const std::function<int(int in, int out)>& body) {
        REQUIRE(thread_count() == 1);
        int down[2];
        int up[2];
        REQUIRE(::pipe2(down, O_CLOEXEC) == 0);
        REQUIRE(::pipe2(up, O_CLOEXEC) == 0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            ::close(down[1]);
            ::close(up[0]);
            int status = body(down[0], up[1]);
            ::_exit(status);
        }
        ::close(down[0]);
        ::close(up[1]);
        to_child_ = down[1];
        from_child_ = up[0];
    }

    ~ChildProcess() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            reap();
        }
        ::close(to_child_);
        ::close(from_child_);
    }

    int to_child() const { return to_child_; }
    int from_child() const { return from_child_; }

    void signal(int number) { REQUIRE(::kill(pid_, number) == 0); }

    // Stops the child and returns once it has stopped: kill() alone returns before that, and a
    // child still running for a moment could answer one more request.
    void freeze() {
        signal(SIGSTOP);
        int status = 0;
        pid_t waited;
        while ((waited = ::waitpid(pid_, &status, WUNTRACED)) < 0 && errno == EINTR) {
        }
        REQUIRE(waited == pid_);
        REQUIRE(WIFSTOPPED(status));
    }

    // Kills the child and waits for it; returns the wait status.
    int kill_and_reap() {
        signal(SIGKILL);
        return reap();
    }

private:
    int reap() {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return status;
    }

    pid_t pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
};

// In the child: wait for the server's port, connect, make one call, report readiness, then
// hold the connection until killed (or until the parent closes the pipe).
int client_child(const CredentialFiles& files, int in, int out) {
    std::uint16_t port = 0;
    if (!read_all(in, &port, sizeof(port)))
        return 2;
    auto client = rpmem::channel::Client::connect(client_config(files, port));
    if (!client || !(*client)->call(protocol::StatusRequest{}))
        return 3;
    char ready = 'R';
    if (!write_all(out, &ready, 1))
        return 4;
    char ignored;
    while (::read(in, &ignored, 1) > 0) {
    }
    return 0;
}

// In the child: run a server, report its port, serve until killed.
int server_child(const CredentialFiles& files, int in, int out) {
    auto log = std::make_shared<SessionLog>();
    auto server = rpmem::channel::Server::start(server_config(files), recording_factory(log));
    if (!server)
        return 2;
    std::uint16_t port = (*server)->port();
    if (!write_all(out, &port, sizeof(port)))
        return 3;
    char ignored;
    while (::read(in, &ignored, 1) > 0) {
    }
    return 0;
}

// A server whose sessions are dropped after `heartbeat` of silence, with a child client
// connected to it.
struct ServerWithChildClient {
    explicit ServerWithChildClient(std::chrono::milliseconds heartbeat)
        : child([this](int in, int out) { return client_child(files, in, out); }) {
        ServerConfig config = server_config(files);
        config.heartbeat_timeout = heartbeat;
        server = start_server(config, recording_factory(log));
        std::uint16_t port = server->port();
        REQUIRE(write_all(child.to_child(), &port, sizeof(port)));
        char ready = 0;
        REQUIRE(read_all(child.from_child(), &ready, 1));
        REQUIRE(ready == 'R');
        REQUIRE(log->wait([](auto& l) { return l.requests.size() == 1; }));
        CHECK(log->closed.empty());
    }

    // Another client, unaffected by the child's fate.
    void check_others_served() {
        auto other = connect_client(client_config(files, server->port()));
        CHECK(other->call(protocol::StatusRequest{}));
    }

    TempDir dir;
    CredentialFiles files = make_credentials(dir);
    ChildProcess child;
    std::shared_ptr<SessionLog> log = std::make_shared<SessionLog>();
    std::unique_ptr<rpmem::channel::Server> server;
};

// A server in a child process (server_child) and the port it reported; the test freezes or
// kills the child.
struct ServerInChild {
    ServerInChild()
        : child([this](int in, int out) { return server_child(files, in, out); }) {
        REQUIRE(read_all(child.from_child(), &port, sizeof(port)));
    }

    TempDir dir;
    CredentialFiles files = make_credentials(dir);
    ChildProcess child;
    std::uint16_t port = 0;
};

// A client whose channel failures are recorded.
struct FailureLog {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<Error> failures;

    std::function<void(const Error&)> observer() {
        return [this](const Error& error) {
            {
                std::lock_guard lock(mutex);
                failures.push_back(error);
            }
            changed.notify_all();
        };
    }

    Error first() {
        REQUIRE(wait_until(mutex, changed, [this] { return !failures.empty(); }));
        std::lock_guard lock(mutex);
        return failures.front();
    }
};

} // namespace

TEST_CASE("a client process that is killed ends its session") {
    ServerWithChildClient setup(2s);
    int status = setup.child.kill_and_reap();
    CHECK(WIFSIGNALED(status));
    // The kernel closes the dead process's socket: the session ends on the reset, well within
    // the heartbeat time.
    REQUIRE(setup.log->wait([](auto& l) { return l.closed.size() == 1; }));
    CHECK(setup.log->closed[0].errno_value() == ECONNRESET);
    CHECK(setup.server->session_count() == 0);
    setup.check_others_served();
}

TEST_CASE("a client process that freezes ends its session at the heartbeat timeout") {
    ServerWithChildClient setup(500ms);
    setup.child.freeze();
    // Its socket stays open, but no ping comes any more.
    REQUIRE(setup.log->wait([](auto& l) { return l.closed.size() == 1; }));
    CHECK(setup.log->closed[0].errno_value() == ETIMEDOUT);
    CHECK(setup.log->closed[0].message() ==
          "no frame from the client for 500 ms (heartbeat timeout)");
    setup.check_others_served();
    setup.child.kill_and_reap();
}

TEST_CASE("a live but idle client keeps its session through many heartbeat periods") {
    TempDir dir;
    auto files = make_credentials(dir);
    auto log = std::make_shared<SessionLog>();
    ServerConfig config = server_config(files);
    config.heartbeat_timeout = 300ms;
    auto server = start_server(config, recording_factory(log));
    auto client = connect_client(client_config(files, server->port()));
    REQUIRE(log->wait([](auto& l) { return l.opened.size() == 1; }));

    // The server's own clock measures the time: a silent raw session opened after each drop is
    // dropped one heartbeat timeout later. Meanwhile the idle client, which pings at a third of
    // the server's timeout whatever its own interval says, must keep its session.
    constexpr std::size_t kRounds = 4;
    for (std::size_t round = 1; round <= kRounds; ++round) {
        RawTlsClient silent(files.client());
        silent.connect_and_hello(server->port());
        REQUIRE(log->wait([&](auto& l) { return l.closed.size() == round; }));
        CHECK(log->closed.back().errno_value() == ETIMEDOUT);
    }
    CHECK(log->opened.size() == kRounds + 1);
    CHECK(server->session_count() == 1); // the idle client's, still open
    CHECK(client->call(protocol::StatusRequest{}));
    CHECK_FALSE(client->failure());
}

TEST_CASE("a frozen server is detected by the client within its heartbeat timeout") {
    ServerInChild server;
    auto& [dir, files, child, port] = server;

    FailureLog failures;
    ClientConfig config = client_config(files, port);
    config.heartbeat_interval = 100ms;
    config.heartbeat_timeout = 600ms;
    config.on_failure = failures.observer();
    auto client = connect_client(config);
    REQUIRE(client->call(protocol::StatusRequest{}));

    child.freeze();
    Error failure = failures.first();
    CHECK(failure.errno_value() == ETIMEDOUT);
    CHECK(failure.message() == "control channel to 127.0.0.1:" + std::to_string(port) +
                                   ": no heartbeat for 600 ms, the server is dead, frozen or "
                                   "unreachable");
    // The failure is sticky: calls fail at once with it instead of waiting for a reply.
    auto after = client->call(protocol::StatusRequest{});
    REQUIRE_FALSE(after);
    CHECK(after.error().errno_value() == ETIMEDOUT);
    child.kill_and_reap();
}

TEST_CASE("a server process that dies is detected by the client at once") {
    ServerInChild server;
    auto& [dir, files, child, port] = server;

    FailureLog failures;
    ClientConfig config = client_config(files, port);
    config.on_failure = failures.observer();
    auto client = connect_client(config);
    REQUIRE(client->call(protocol::StatusRequest{}));

    child.kill_and_reap();
    Error failure = failures.first();
    CHECK(failure.errno_value() == ECONNRESET);
}

TEST_CASE("a call waiting on a frozen server fails by the heartbeat, not the request timeout") {
    ServerInChild server;
    auto& [dir, files, child, port] = server;

    ClientConfig config = client_config(files, port);
    config.heartbeat_interval = 100ms;
    config.heartbeat_timeout = 600ms;
    config.request_timeout = 1h; // were it not for the heartbeat, this call would hang
    auto client = connect_client(config);
    child.freeze();
    auto reply = client->call(protocol::StatusRequest{});
    REQUIRE_FALSE(reply);
    CHECK(reply.error().errno_value() == ETIMEDOUT);
    CHECK_THAT(reply.error().message(), Catch::Contains("no heartbeat for 600 ms"));
    child.kill_and_reap();
}
