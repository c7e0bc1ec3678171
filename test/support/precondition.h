// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Test executables that need something of the host (root, a kernel feature) link with
// precondition_main.cpp instead of the shared Catch2 main and define missing_precondition().
// When it names what is missing, main() runs no test case and exits with kSkipped, which meson
// reports as SKIP: such a test never passes without having checked anything.

#include <optional>
#include <string>

namespace rpmem::test {

// The exit status meson counts as a skipped test.
inline constexpr int kSkipped = 77;

// Defined by each executable linked with precondition_main.cpp: why this host cannot run its
// test cases, or nullopt when it can.
std::optional<std::string> missing_precondition();

// Probes for the usual preconditions; each returns what is missing, or nullopt.
std::optional<std::string> missing_root();
// A mount namespace of a child's own in which a tmpfs can be mounted (CAP_SYS_ADMIN).
std::optional<std::string> missing_mount_namespace();

} // namespace rpmem::test
