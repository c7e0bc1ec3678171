// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <string_view>

#include <boost/system/error_code.hpp>
#include <openssl/ssl.h>

#include "base/error.h"

namespace rpmem::channel {

// Turning OpenSSL and Asio failures into rpmem::Error with a message a person can act on.
// Stateless; OpenSSL's error queue is per thread.

// Empties this thread's OpenSSL error queue into one line ("a; b"); "" when it is empty.
std::string drain_openssl_errors();

// Why certificate verification failed on `ssl` ("certificate has expired"), or "" if it did
// not fail.
std::string verify_failure(const SSL* ssl);

// `what` + the error's text. errno: the system value for system errors; ECONNRESET when the
// peer closed the connection; EACCES for a TLS failure about certificates (ours or theirs);
// EPROTO for any other TLS failure; ECANCELED for an aborted operation.
Error error_from_asio(const boost::system::error_code& ec, std::string_view what);

// True when `ec` is a TLS failure about a certificate: verification failed here, or the peer
// sent an alert refusing ours.
bool is_certificate_refusal(const boost::system::error_code& ec);

} // namespace rpmem::channel
