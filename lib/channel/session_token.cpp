// SPDX-License-Identifier: BSD-3-Clause
#include "channel/session_token.h"

#include <cerrno>

#include <openssl/rand.h>

#include "channel/tls_error.h"

namespace rpmem::channel {

Result<protocol::SessionToken> make_session_token() {
    protocol::SessionToken token{};
    if (RAND_bytes(token.data(), static_cast<int>(token.size())) != 1)
        return fail(EIO, "making a session token: " + drain_openssl_errors(), ErrorSource::tls);
    return token;
}

} // namespace rpmem::channel
