// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>

namespace rpmem::daemon {

// What the supervisor and a worker assume of each other beyond their messages
// (protocol/worker_message.h).

// Descriptor number of the worker socket in the worker.
inline constexpr int kWorkerSocketFd = 3;

// The bytes at the start of a pool part that hold its header (kHeaderSize of poolset): a
// sandboxed worker can map no shared file below this offset, unless it was started to serve
// pool sets whose later parts have no header (the supervisor's WorkerPool decides which).
inline constexpr std::uint64_t kHeaderGuard = 4096;

} // namespace rpmem::daemon
