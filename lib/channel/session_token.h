// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "base/error.h"
#include "protocol/session_token.h"

namespace rpmem::channel {

// A fresh one-time session token from OpenSSL's CSPRNG; rpmemd hands it out in the
// create/open reply and the fabric target checks it (protocol::same_token) on every lane
// connection of the session.
Result<protocol::SessionToken> make_session_token();

} // namespace rpmem::channel
