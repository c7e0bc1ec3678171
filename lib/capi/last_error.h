// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string_view>

#include "base/error.h"

namespace rpmem::capi {

// The C ABI's error reporting: each thread's last error text (rpmem_errormsg()) and errno. The
// thread-local buffer is one of the few globals the C ABI needs.

// Sets errno to the error's positive errno and the thread's message to its text.
void report(const Error& error);

// As report(), for failures detected in the C layer itself (argument checks).
void report(int errno_value, std::string_view message);

// The calling thread's last message ("" when none).
const char* last_message() noexcept;

} // namespace rpmem::capi
