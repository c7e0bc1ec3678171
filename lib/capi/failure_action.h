// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "base/error.h"
#include "client/replica.h"

namespace rpmem::capi {

// True when `caller` (a return address) lies in Debian's libpmemobj.so.1.
bool called_from_libpmemobj(const void* caller) noexcept;

// The C ABI's answer to a data-path call (persist, deep persist, flush, drain) of `replica`:
// 0 on success; on failure, under on-replica-failure = error, -1 with errno and the message
// set (PMDK's contract), except for a call from libpmemobj; under abort, and for libpmemobj
// under error, it writes the reason (target, pool set, step, cause) to stderr and the log and
// aborts the process. libpmemobj answers any failed remote persist by cleaning up mid-
// transaction and then crashing (SIGSEGV) before its own abort; stopping here is what it
// means to do, without the crash. (continue never fails here: the replica degrades instead.)
int data_path_status(const Result<void>& result, const client::Replica& replica, const char* step,
                     const void* caller);

} // namespace rpmem::capi
