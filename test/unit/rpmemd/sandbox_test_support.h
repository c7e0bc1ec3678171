// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// What the sandbox tests share: the sandbox is entered in forked children only (it is
// irreversible), each reporting "" when every expectation held, else the first that failed.

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "process.h"
#include "rpmemd/worker/sandbox.h"

namespace rpmem::test {

// Returns from the enclosing function what `message` says went wrong, if anything.
#define RETURN_IF(message)                                                                         \
    do {                                                                                           \
        if (std::string found = (message); !found.empty())                                         \
            return found;                                                                          \
    } while (false)

using ChildBody = std::function<std::string(const daemon::SandboxReport&)>;

// In a forked child (run_in_child): runs `prepare` (when given: "" or what failed), enters the
// sandbox with `options` (plus stderr and the report pipe kept) and runs `body`.
inline ChildOutcome run_sandboxed(daemon::SandboxOptions options, const ChildBody& body,
                                  const std::function<std::string()>& prepare = {}) {
    return run_in_child([&](int report_fd) -> std::string {
        if (prepare)
            RETURN_IF(prepare());
        options.keep_fds.push_back(2);
        options.keep_fds.push_back(report_fd);
        auto entered = daemon::enter_sandbox(options);
        if (!entered)
            return "enter_sandbox: " + entered.error().message();
        return body(*entered);
    });
}

inline void expect_success(const ChildOutcome& outcome) {
    INFO("child: " << outcome.message);
    CHECK(outcome.status == 0);
}

// "" if `call` failed with `expected`, else what happened.
inline std::string expect_errno(const char* what, long result, int expected) {
    if (result >= 0)
        return fmt::format("{} succeeded, expected {}", what, std::strerror(expected));
    if (errno != expected)
        return fmt::format("{} failed with {}, expected {}", what, std::strerror(errno),
                           std::strerror(expected));
    return "";
}

// Reads up to 256 bytes of `path` into `text`; "" or what failed.
inline std::string read_file(const std::string& path, std::string& text) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fmt::format("opening {} for reading: {}", path, std::strerror(errno));
    char buffer[256];
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    ::close(fd);
    if (got < 0)
        return fmt::format("reading {}: {}", path, std::strerror(errno));
    text.assign(buffer, static_cast<std::size_t>(got));
    return "";
}

} // namespace rpmem::test
