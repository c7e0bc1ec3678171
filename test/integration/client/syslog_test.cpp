// SPDX-License-Identifier: BSD-3-Clause
// By default librpmem logs through syslog(3): run in a mount namespace of its own whose /dev
// holds a datagram socket `log` this test reads, as journald or rsyslog would, rpmem-hello's
// create-or-open leaves its lines there (at LOG_INFO, tagged with the program, starting
// "librpmem: "), nothing on stderr; and a replica that cannot be reached is reported at LOG_ERR.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "hello_target.h"
#include "precondition.h"
#include "process.h"

using namespace rpmem::test;
namespace fs = std::filesystem;

std::optional<std::string> rpmem::test::missing_precondition() {
    if (auto root = missing_root())
        return root;
    return missing_mount_namespace();
}

namespace {

// In the calling (forked) process: a private mount namespace whose /dev is a tmpfs of links to
// the real device nodes (bound beneath `stage`) plus a datagram socket at /dev/log, returned.
// "" in `problem` when it all worked.
int private_dev_log(const fs::path& stage, std::string& problem) {
    auto failed = [&](const std::string& what) {
        problem = what + ": " + std::strerror(errno);
        return -1;
    };
    if (::unshare(CLONE_NEWNS) != 0)
        return failed("unshare(CLONE_NEWNS)");
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return failed("making / private");
    std::error_code error;
    fs::create_directories(stage, error);
    if (::mount("/dev", stage.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
        return failed("binding /dev");
    if (::mount("tmpfs", "/dev", "tmpfs", 0, "mode=0755") != 0)
        return failed("mounting a tmpfs on /dev");
    for (const auto& entry : fs::directory_iterator(stage, error)) {
        fs::create_symlink(entry.path(), fs::path("/dev") / entry.path().filename(), error);
        if (error)
            return failed("linking " + entry.path().string());
    }
    int socket = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (socket < 0)
        return failed("socket");
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, "/dev/log");
    if (::bind(socket, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
        return failed("binding /dev/log");
    return socket;
}

std::vector<std::string> received(int socket) {
    std::vector<std::string> messages;
    char buffer[8192];
    for (;;) {
        ssize_t got = ::recv(socket, buffer, sizeof(buffer), 0);
        if (got <= 0)
            return messages;
        messages.emplace_back(buffer, static_cast<std::size_t>(got));
    }
}

bool any_contains(const std::vector<std::string>& messages, const std::string& a,
                  const std::string& b) {
    for (const std::string& message : messages)
        if (message.find(a) != std::string::npos && message.find(b) != std::string::npos)
            return true;
    return false;
}

std::string joined(const std::vector<std::string>& messages) {
    std::string text;
    for (const std::string& message : messages)
        text += message + "\n";
    return text;
}

} // namespace

TEST_CASE("by default librpmem's lines go to the system log, none to stderr") {
    HelloTarget setup;
    const std::string target = setup.rpmemd.target();
    const fs::path stage = setup.root / "real-dev";

    ChildOutcome outcome = run_in_child([&](int) -> std::string {
        std::string problem;
        int log = private_dev_log(stage, problem);
        if (log < 0)
            return problem;
        const std::string info = "<" + std::to_string(LOG_USER | LOG_INFO) + ">";
        const std::string err = "<" + std::to_string(LOG_USER | LOG_ERR) + ">";
        for (int run_number = 1; run_number <= 2; ++run_number) {
            auto done = setup.run_hello();
            if (done.status != 0 || !done.err.empty())
                return "run " + std::to_string(run_number) + " exited " +
                       std::to_string(done.status) + " with stderr:\n" + done.err;
        }
        auto messages = received(log);
        if (!any_contains(messages, info, "rpmem-hello") ||
            !any_contains(messages, "librpmem: created hello.set on " + target, info) ||
            !any_contains(messages, "librpmem: creating hello.set on " + target, info) ||
            !any_contains(messages, "librpmem: opened hello.set on " + target, info))
            return "expected the create, the EEXIST and the open at LOG_INFO, got:\n" +
                   joined(messages);
        if (any_contains(messages, err, "librpmem"))
            return "create-or-open logged an error:\n" + joined(messages);

        // A target nobody serves: the reason at LOG_ERR, still nothing on stderr of librpmem's.
        auto refused = setup.run_hello("127.0.0.1:1");
        if (refused.status == 0)
            return "a target that does not exist was reached";
        messages = received(log);
        if (!any_contains(messages, err, "librpmem: creating hello.set on 127.0.0.1:1"))
            return "no LOG_ERR line for the unreachable target, got:\n" + joined(messages);
        if (refused.err.find("[rpmem.client]") != std::string::npos)
            return "librpmem wrote to stderr:\n" + refused.err;
        ::close(log);
        return "";
    });
    INFO(outcome.message);
    CHECK(outcome.status == 0);
}
