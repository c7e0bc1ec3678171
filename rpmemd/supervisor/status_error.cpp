// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/status_error.h"

#include <cerrno>
#include <utility>

namespace rpmem::daemon {

Error status_error(protocol::Status status, std::string message) {
    return Error(protocol::errno_of(status), std::move(message), ErrorSource::remote,
                 static_cast<int>(status));
}

Error with_status(Error error, protocol::Status status) {
    return status_error(status, error.message());
}

protocol::Status reply_status_for(const Error& error, protocol::Status einval_status) {
    if (error.source() == ErrorSource::remote && error.native_code() >= 0 &&
        error.native_code() <= protocol::kMaxStatusValue) {
        auto status = static_cast<protocol::Status>(error.native_code());
        // Trust the carried status only if it is consistent with the errno it was made with.
        if (status != protocol::Status::ok && protocol::errno_of(status) == error.errno_value())
            return status;
    }
    if (error.errno_value() == EINVAL)
        return einval_status;
    protocol::Status status = protocol::status_of(error.errno_value());
    return status == protocol::Status::ok ? protocol::Status::fatal : status;
}

} // namespace rpmem::daemon
