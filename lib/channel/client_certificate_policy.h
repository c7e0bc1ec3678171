// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace rpmem::channel {

// What rpmemd accepts as a client's certificate beyond a valid chain to its CA: an end-entity
// certificate made for client authentication.
//
// - basicConstraints CA:TRUE is refused: a CA certificate is no client's identity (and one
//   holding it could sign identities of its own where CAs are chained).
// - An extendedKeyUsage extension must include clientAuth: a certificate issued for a server
//   (serverAuth only) or for e-mail is not to open sessions.
// - A certificate without extendedKeyUsage (or without keyUsage) is accepted: RFC 5280 reads
//   an absent extension as "no restriction", many private CAs issue such certificates, and the
//   trust decision is that our CA signed it. OpenSSL's own "ssl_client" purpose check, which a
//   TLS server applies by default, also refuses a keyUsage without digitalSignature.
//
// The callback of SSL_CTX_set_verify for the server role: refuses the leaf with
// X509_V_ERR_INVALID_NON_CA or X509_V_ERR_INVALID_PURPOSE, which fails the handshake (the
// client receives an alert); describe_client_verify_failure() turns that into the reason.
// Thread-safe (no state).
int verify_client_certificate(int preverified, X509_STORE_CTX* store);

// Why `certificate` may not identify a client, or empty when it may.
std::string client_certificate_problem(X509* certificate);

// The reason a handshake's client certificate verification failed, worded for the log; empty
// when it did not fail.
std::string describe_client_verify_failure(const SSL* ssl);

} // namespace rpmem::channel
