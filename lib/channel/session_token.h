// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "base/error.h"
#include "protocol/reply.h"

namespace rpmem::channel {

// A fresh one-time session token from OpenSSL's CSPRNG; rpmemd hands it out in the
// create/open reply and the fabric layer checks it on every connection of the session.
Result<protocol::SessionToken> make_session_token();

// Constant-time comparison, so that a wrong guess learns nothing from the time it took.
bool tokens_equal(const protocol::SessionToken& a, const protocol::SessionToken& b) noexcept;

} // namespace rpmem::channel
