// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string_view>

#include "base/error.h"

namespace rpmem::fabric {

// The positive errno for a libfabric return or error code (either sign). Codes that are errno
// values already keep their value; libfabric's own codes (>= FI_ERRNO_OFFSET) map to the
// nearest errno (FI_ETRUNC -> EMSGSIZE, FI_ENOKEY -> EKEYREJECTED, ...); anything else is EIO.
int errno_from_fabric(int code) noexcept;

// The same for an operation on an established connection: every way a provider says "the
// connection is gone" (ENOTCONN, EPIPE, ECONNABORTED, ESHUTDOWN, ECONNRESET, ECANCELED for
// operations flushed by the break, ENOENT from sockets for a torn-down connection) becomes
// ECONNRESET, which callers above this layer test for.
int connection_errno_from_fabric(int code) noexcept;

// An Error for a failed libfabric call: "<operation> (<peer>): <fi_strerror text>", or without
// the parenthesis when `peer` is empty. Source is ErrorSource::fabric with the positive FI code.
Error fabric_error(int code, std::string_view operation, std::string_view peer = {});

// The same with connection_errno_from_fabric's mapping.
Error connection_error(int code, std::string_view operation, std::string_view peer);

} // namespace rpmem::fabric
