// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace rpmem {

// Where a failure came from. It decides nothing about errno (that is fixed when the Error is
// made); it tells logs and tests which layer produced the native code.
enum class ErrorSource {
    system,   // native_code is an errno value
    fabric,   // native_code is a (positive) libfabric FI_E* value
    tls,      // native_code is an OpenSSL error or an Asio error value
    protocol, // native_code is a protocol decode failure
    remote,   // native_code is the status the peer replied with
    input,    // bad input from the caller or a file; native_code is an errno value
};

// An error travelling up to the API boundary: a positive errno (what the C ABI reports), the
// layer-specific native code, and a message to which each caller prepends its context
// ("connecting lane 3 to 10.0.0.2:7636: Connection refused"). Cheap to move, never throws
// beyond std::bad_alloc.
class Error {
public:
    Error(int errno_value, std::string message, ErrorSource source = ErrorSource::system,
          int native_code = 0);

    // `what` followed by strerror(errno_value).
    static Error from_errno(int errno_value, std::string_view what);

    int errno_value() const noexcept { return errno_; }
    ErrorSource source() const noexcept { return source_; }
    int native_code() const noexcept { return native_code_; }
    const std::string& message() const noexcept { return message_; }

    // Prepends "context: " to the message; returns *this for chaining.
    Error& add_context(std::string_view context) &;
    Error&& add_context(std::string_view context) &&;

private:
    int errno_;
    ErrorSource source_;
    int native_code_;
    std::string message_;
};

template <typename T>
using Result = tl::expected<T, Error>;

// The usual way to return a failure: `return fail(EINVAL, "lane is not open");`, or with
// formatting `return fail(EINVAL, fmt::format("lane {} is not open", lane));`.
inline tl::unexpected<Error> fail(int errno_value, std::string message,
                                  ErrorSource source = ErrorSource::input, int native_code = 0) {
    return tl::unexpected<Error>(Error(errno_value, std::move(message), source, native_code));
}

inline tl::unexpected<Error> fail(Error error) {
    return tl::unexpected<Error>(std::move(error));
}

// Adds context to the error of a failed Result, passing a successful one through unchanged.
template <typename T>
Result<T> with_context(Result<T>&& result, std::string_view context) {
    if (!result)
        result.error().add_context(context);
    return std::move(result);
}

} // namespace rpmem
