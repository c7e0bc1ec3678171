// SPDX-License-Identifier: BSD-3-Clause
#include "base/error.h"

#include <cerrno>
#include <cstring>

namespace rpmem {

Error::Error(int errno_value, std::string message, ErrorSource source, int native_code)
    : errno_(errno_value > 0 ? errno_value : EIO)
    , source_(source)
    , native_code_(native_code)
    , message_(std::move(message)) {}

Error Error::from_errno(int errno_value, std::string_view what) {
    std::string message(what);
    message += ": ";
    message += std::strerror(errno_value);
    return Error(errno_value, std::move(message), ErrorSource::system, errno_value);
}

Error& Error::add_context(std::string_view context) & {
    std::string message(context);
    message += ": ";
    message += message_;
    message_ = std::move(message);
    return *this;
}

Error&& Error::add_context(std::string_view context) && {
    add_context(context);
    return std::move(*this);
}

} // namespace rpmem
