// SPDX-License-Identifier: BSD-3-Clause
#include "capi/last_error.h"

#include <cerrno>
#include <string>

namespace rpmem::capi {

namespace {

thread_local std::string thread_message;

} // namespace

void report(const Error& error) {
    thread_message = error.message();
    errno = error.errno_value();
}

void report(int errno_value, std::string_view message) {
    thread_message.assign(message);
    errno = errno_value;
}

const char* last_message() noexcept {
    return thread_message.c_str();
}

} // namespace rpmem::capi
