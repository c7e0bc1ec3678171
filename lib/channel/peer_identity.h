// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include <openssl/ssl.h>

#include "base/error.h"

namespace rpmem::channel {

// The client identity of a verified TLS session: the single subject CN of the peer's
// certificate (subjectAltNames are not consulted; `rpmemctl init` puts the identity in the CN).
// Fails with EACCES when there is no certificate, no CN, more than one CN, or a CN that is
// not 1..kMaxIdentityLength printable characters, so that what rpmemd compares with its allow
// list and writes to its logs is always a plain name.
Result<std::string> peer_identity(const SSL* ssl);

} // namespace rpmem::channel
