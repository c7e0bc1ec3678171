// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include "base/error.h"
#include "protocol/status.h"

namespace rpmem::daemon {

// Errors of the daemon's request handling that already know the protocol status the client is
// to be answered with. Several statuses share EINVAL (bad name, bad lanes, bad pool set
// configuration, ...), so the errno alone cannot say which one a failure deserves: the place
// that knows the situation picks the status, and the session replies with it. Such errors have
// source ErrorSource::remote and the Status as native code (the convention lib/channel uses
// for the statuses it sends).

// An error with errno protocol::errno_of(status) that answers with `status`.
Error status_error(protocol::Status status, std::string message);

// Returns `error` answering with `status`, whatever it carried before (errno follows).
Error with_status(Error error, protocol::Status status);

// The status to answer `error` with: the one status_error() gave it, else protocol::status_of
// of its errno, where EINVAL (ambiguous) becomes `einval_status`.
protocol::Status
reply_status_for(const Error& error,
                 protocol::Status einval_status = protocol::Status::invalid_request);

} // namespace rpmem::daemon
