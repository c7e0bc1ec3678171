// SPDX-License-Identifier: BSD-3-Clause
#pragma once

namespace rpmem::daemon {

// The data-path worker: `rpmemd --worker [--log-level L] [--uid N --gid N] [--no-sandbox]
// [--responders N]`, started by the supervisor (WorkerProcess) with its end of the worker
// socket as descriptor 3 and stderr on a pipe the supervisor reads as this worker's log. It
// warms libfabric up (loads the providers), enters its sandbox (rpmemd/worker/sandbox.h: ids
// dropped, no new privileges, every other descriptor closed, no file system, a system call
// allow-list), then serves WorkerStart/WorkerStop until the supervisor closes the socket, and
// exits. It holds the pools and fabric objects of one client identity only, and never parses
// control-channel input. Its sessions share at most N responder threads (ResponderPool;
// default one per CPU). Returns the exit status.
int run_worker(int argc, char** argv);

} // namespace rpmem::daemon
