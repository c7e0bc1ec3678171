// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rpmem::test::faults {

// Two network namespaces of this test, "initiator" and "target", joined by a veth pair
// (10.231.0.1/24 and 10.231.0.2/24), each with its loopback up; nothing else reaches them.
// Names are rpmf-<pid>-<n>-i and -t: unique per run, and a run that died without removing its
// namespaces is recognised by its dead pid and cleaned up by the next one.
//
// Removal is guaranteed by a janitor: a child forked first, in a session of its own (meson's
// kill of the test's process group at a timeout does not reach it), that waits for the end of
// a pipe held by this object. Whether the object is destroyed or the whole test process dies
// (an assertion, a timeout, SIGKILL), the pipe closes and the janitor kills every process left
// in the namespaces and deletes them. The destructor waits for it. Not thread-safe; one owner.
class NetnsPair {
public:
    NetnsPair();
    ~NetnsPair();
    NetnsPair(const NetnsPair&) = delete;
    NetnsPair& operator=(const NetnsPair&) = delete;

    const std::string& initiator() const noexcept { return initiator_; }
    const std::string& target() const noexcept { return target_; }
    static constexpr const char* kInitiatorAddress = "10.231.0.1";
    static constexpr const char* kTargetAddress = "10.231.0.2";
    // The target's side of the veth pair (for rules that must spare its loopback).
    static constexpr const char* kTargetInterface = "rpmf-t";

    // `argv` run inside one namespace (prefixed with `ip netns exec NAME`; ip execs the
    // program, so a process spawned this way has the program's pid).
    std::vector<std::string> in_initiator(const std::vector<std::string>& argv) const;
    std::vector<std::string> in_target(const std::vector<std::string>& argv) const;

    // Why this host cannot make such namespaces (not root, no `ip netns`, no nft), or nullopt.
    static std::optional<std::string> missing();

private:
    void remove_now() noexcept;

    std::string initiator_;
    std::string target_;
    pid_t janitor_ = -1;
    int janitor_pipe_ = -1; // write end; the janitor cleans up when it closes
};

} // namespace rpmem::test::faults
