// SPDX-License-Identifier: BSD-3-Clause
#include "channel/session_token.h"

#include <cerrno>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "channel/tls_error.h"

namespace rpmem::channel {

Result<protocol::SessionToken> make_session_token() {
    protocol::SessionToken token{};
    if (RAND_bytes(token.data(), static_cast<int>(token.size())) != 1)
        return fail(EIO, "making a session token: " + drain_openssl_errors(), ErrorSource::tls);
    return token;
}

bool tokens_equal(const protocol::SessionToken& a, const protocol::SessionToken& b) noexcept {
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace rpmem::channel
