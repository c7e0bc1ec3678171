// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include "rpmemd/worker/responder_pool.h"

using namespace std::chrono_literals;
using rpmem::daemon::ResponderOptions;
using rpmem::daemon::ResponderPool;
using rpmem::daemon::Responsive;

namespace {

// A session whose "completions" are bytes written to its pipe.
class PipeSession final : public Responsive {
public:
    explicit PipeSession(std::string name)
        : name_(std::move(name)) {
        int ends[2];
        REQUIRE(::pipe2(ends, O_NONBLOCK | O_CLOEXEC) == 0);
        read_ = ends[0];
        write_ = ends[1];
    }
    ~PipeSession() override {
        ::close(read_);
        ::close(write_);
    }

    void post() { REQUIRE(::write(write_, "x", 1) == 1); }

    std::size_t poll(bool) override {
        polls.fetch_add(1);
        thread = std::this_thread::get_id();
        char bytes[64];
        const ssize_t n = ::read(read_, bytes, sizeof bytes);
        if (n > 0)
            handled.fetch_add(static_cast<std::size_t>(n));
        return n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    Arm arm(std::vector<pollfd>& fds) override {
        fds.push_back({read_, POLLIN, 0});
        return Arm::armed;
    }
    std::size_t block(std::chrono::milliseconds) override { return 0; }
    const std::string& name() const noexcept override { return name_; }

    std::atomic<std::size_t> polls{0};
    std::atomic<std::size_t> handled{0};
    std::atomic<std::thread::id> thread{};

private:
    std::string name_;
    int read_ = -1;
    int write_ = -1;
};

bool eventually(const std::function<bool()>& condition) {
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < end) {
        if (condition())
            return true;
        std::this_thread::sleep_for(1ms);
    }
    return condition();
}

} // namespace

TEST_CASE("sessions share at most nthreads responder threads", "[rpmemd][responders]") {
    ResponderPool pool(ResponderOptions{.threads = 2, .spin = 0us});
    std::vector<std::unique_ptr<PipeSession>> sessions;
    for (int i = 0; i < 5; ++i) {
        sessions.push_back(std::make_unique<PipeSession>("session " + std::to_string(i)));
        REQUIRE(pool.attach(*sessions.back()));
        CHECK(pool.threads() == std::min(static_cast<unsigned>(i) + 1, 2U));
    }
    CHECK(pool.sessions() == 5);
    // Every session is served: what is posted to it gets handled, by one of two threads.
    for (auto& session : sessions)
        session->post();
    for (auto& session : sessions)
        CHECK(eventually([&] { return session->handled.load() == 1; }));
    std::vector<std::thread::id> threads;
    for (auto& session : sessions)
        if (std::find(threads.begin(), threads.end(), session->thread.load()) == threads.end())
            threads.push_back(session->thread.load());
    CHECK(threads.size() == 2);

    // A detached session is not called any more, and the others are still served.
    pool.detach(*sessions[0]);
    const std::size_t polls = sessions[0]->polls.load();
    sessions[0]->post();
    sessions[1]->post();
    CHECK(eventually([&] { return sessions[1]->handled.load() == 2; }));
    std::this_thread::sleep_for(100ms); // longer than a slice: a full sweep would have come
    CHECK(sessions[0]->polls.load() == polls);
    CHECK(sessions[0]->handled.load() == 1);

    // A thread ends with its last session.
    for (std::size_t i = 1; i < sessions.size(); ++i)
        pool.detach(*sessions[i]);
    CHECK(pool.threads() == 0);
    CHECK(pool.sessions() == 0);
}

TEST_CASE("an idle responder blocks instead of spinning", "[rpmemd][responders]") {
    ResponderPool pool(ResponderOptions{.threads = 1, .spin = 50us});
    PipeSession session("idle");
    REQUIRE(pool.attach(session));
    session.post();
    REQUIRE(eventually([&] { return session.handled.load() == 1; }));
    // Blocked in poll(2): only the full sweep of each 50 ms slice looks at the session.
    std::this_thread::sleep_for(50ms);
    const std::size_t before = session.polls.load();
    std::this_thread::sleep_for(500ms);
    CHECK(session.polls.load() - before <= 20);
    // And it still wakes at once for new work.
    const auto posted = std::chrono::steady_clock::now();
    session.post();
    REQUIRE(eventually([&] { return session.handled.load() == 2; }));
    CHECK(std::chrono::steady_clock::now() - posted < 40ms);
    pool.detach(session);
}
