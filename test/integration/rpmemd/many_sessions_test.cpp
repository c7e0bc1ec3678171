// SPDX-License-Identifier: BSD-3-Clause
// One rpmemd serving 128 concurrent sessions of four client identities (so four workers) with
// nthreads = 2: every session persists and its bytes land in its own pool file, each worker
// runs at most its two responder threads whatever its session count, and the descriptors and
// memory each session costs stay bounded.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "client/replica.h"
#include "client_settings.h"
#include "sanitizer.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;

namespace {

constexpr std::size_t kPoolSize = 2u << 20; // one 2 MiB part per pool
constexpr unsigned kIdentities = 4;
constexpr unsigned kSessionsPerIdentity = 32;
constexpr unsigned kThreads = 2; // nthreads
constexpr std::size_t kOffset = 8192;

struct Session {
    std::string set;
    PageBuffer memory;
    std::unique_ptr<client::Replica> replica;
};

// What /proc says of a process: threads, open descriptors, resident KiB.
struct Usage {
    std::size_t threads = 0;
    std::size_t fds = 0;
    std::size_t rss_kib = 0;
};

Usage usage_of(pid_t pid) {
    Usage usage;
    const std::filesystem::path proc = "/proc/" + std::to_string(pid);
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(proc / "task"))
        ++usage.threads;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(proc / "fd"))
        ++usage.fds;
    std::ifstream status(proc / "status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            usage.rss_kib = std::stoul(line.substr(6));
    return usage;
}

// rpmemd's children: its workers.
std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> children;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string text;
        std::getline(stat, text);
        // pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'.
        const auto close = text.rfind(')');
        if (close == std::string::npos)
            continue;
        char state = 0;
        int ppid = 0;
        if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
            children.push_back(static_cast<pid_t>(std::stoi(name)));
    }
    return children;
}

std::string file_bytes(const std::filesystem::path& path, std::size_t offset, std::size_t n) {
    std::ifstream file(path, std::ios::binary);
    file.seekg(static_cast<std::streamoff>(offset));
    std::string bytes(n, '\0');
    file.read(bytes.data(), static_cast<std::streamsize>(n));
    return bytes;
}

} // namespace

TEST_CASE("one rpmemd serves 128 sessions of four identities with two responders each") {
    TargetHost host(TargetHost::Options{
        .config_lines = {"max-sessions = 256", "max-sessions-per-client = 64",
                         fmt::format("nthreads = {}", kThreads), "log-level = notice"},
    });
    const Usage idle = usage_of(host.daemon().pid());

    std::vector<std::vector<Session>> by_identity(kIdentities);
    std::vector<std::thread> openers;
    std::vector<std::string> failures(kIdentities);
    for (unsigned id = 0; id < kIdentities; ++id) {
        const std::string identity = "client" + std::to_string(id);
        const channel::TlsFiles tls = host.client_tls(identity);
        for (unsigned s = 0; s < kSessionsPerIdentity; ++s) {
            Session session;
            session.set = fmt::format("{}-{}.set", identity, s);
            host.write_set(session.set, fmt::format("{}-{}", identity, s), 1);
            session.memory = pool_buffer(kPoolSize);
            by_identity[id].push_back(std::move(session));
        }
        // Each identity opens its sessions from a thread of its own, as separate clients would.
        openers.emplace_back([&, id, settings = client_settings(tls, "tcp", 60s)] {
            for (Session& session : by_identity[id]) {
                unsigned lanes = 1;
                PoolAttributes attributes = pmemobj_attributes();
                auto made = client::Replica::create(settings, Target{"", "127.0.0.1", host.port()},
                                                    session.set, {session.memory.data(), kPoolSize},
                                                    lanes, &attributes);
                if (!made) {
                    failures[id] = session.set + ": " + made.error().message();
                    return;
                }
                session.replica = std::move(*made);
            }
        });
    }
    for (auto& opener : openers)
        opener.join();
    for (const auto& failure : failures) {
        INFO(failure);
        REQUIRE(failure.empty());
    }

    // Every session persists its own bytes, three times over, interleaved with the others.
    for (int round = 0; round < 3; ++round) {
        for (unsigned id = 0; id < kIdentities; ++id) {
            for (unsigned s = 0; s < kSessionsPerIdentity; ++s) {
                Session& session = by_identity[id][s];
                const std::string text = fmt::format("round {} client{} session {}", round, id, s);
                std::memset(session.memory.data() + kOffset, 0, 64);
                std::memcpy(session.memory.data() + kOffset, text.data(), text.size());
                auto persisted =
                    session.replica->persist(kOffset, 64, 0, client::PersistMode::strict);
                INFO(session.set << ": " << (persisted ? "" : persisted.error().message()));
                REQUIRE(persisted);
            }
        }
    }
    for (unsigned id = 0; id < kIdentities; ++id) {
        for (unsigned s = 0; s < kSessionsPerIdentity; s += 7) {
            const std::string expected = fmt::format("round 2 client{} session {}", id, s);
            const auto part = host.dir() / fmt::format("client{}-{}.0", id, s);
            CHECK(file_bytes(part, kOffset, expected.size()) == expected);
        }
    }

    // One worker per identity, each with its responders bounded by nthreads: a thread per
    // session would be 32 each.
    const std::vector<pid_t> workers = children_of(host.daemon().pid());
    CHECK(workers.size() == kIdentities);
    constexpr unsigned kSessions = kIdentities * kSessionsPerIdentity;
    const Usage supervisor = usage_of(host.daemon().pid());
    Usage total = supervisor;
    std::size_t worker_fds = 0;
    for (pid_t worker : workers) {
        const Usage usage = usage_of(worker);
        INFO("worker " << worker << ": " << usage.threads << " threads, " << usage.fds << " fds, "
                       << usage.rss_kib << " KiB");
        CHECK(usage.threads <= kThreads + 3); // main, responders, libfabric's own
        total.threads += usage.threads;
        total.fds += usage.fds;
        worker_fds += usage.fds;
        total.rss_kib += usage.rss_kib;
    }
    const double fds = static_cast<double>(total.fds - idle.fds) / kSessions;
    const double threads = static_cast<double>(total.threads - idle.threads) / kSessions;
    const double kib = static_cast<double>(total.rss_kib - idle.rss_kib) / kSessions;
    WARN(fmt::format("{} sessions: per session {:.2f} fds, {:.3f} threads, {:.0f} KiB RSS "
                     "(rpmemd and its workers); fds per session: supervisor {:.2f}, workers {:.2f}",
                     kSessions, fds, threads, kib,
                     static_cast<double>(supervisor.fds - idle.fds) / kSessions,
                     static_cast<double>(worker_fds) / kSessions));
    CHECK(fds <= 16);
    CHECK(threads < 0.2);
    // AddressSanitizer's redzones and shadow pages triple what the heap costs (measured: 6.6 MiB a
    // session).
    CHECK(kib <= (test::kAddressSanitizer ? 10240 : 2048));

    for (auto& identity : by_identity)
        for (Session& session : identity) {
            auto closed = session.replica->close();
            INFO(session.set << ": " << (closed ? "" : closed.error().message()));
            CHECK(closed);
        }
    // Each session's data port let go of every connection when it ended: none was left to the
    // provider (FabricTarget::close_listener), none made the close wait out its drain bound.
    // (After rpmemd ended: its workers' log lines reach its log by a pipe.)
    CHECK(host.daemon().stop() == 0);
    CHECK_THAT(rpmem::test::read_text(host.log_file()),
               !Catch::Contains("the fabric provider still holds"));
}
