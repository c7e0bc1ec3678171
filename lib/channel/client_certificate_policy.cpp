// SPDX-License-Identifier: BSD-3-Clause
#include "channel/client_certificate_policy.h"

#include <cstdint>

#include <openssl/x509v3.h>

#include "channel/tls_error.h"

namespace rpmem::channel {

namespace {

constexpr const char* kIsCa = "it is a CA certificate (basicConstraints CA:TRUE), not a client's";
constexpr const char* kNoClientAuth =
    "it is not made for client authentication (its extendedKeyUsage lacks clientAuth, or its "
    "keyUsage forbids signing)";

} // namespace

std::string client_certificate_problem(X509* certificate) {
    std::uint32_t flags = X509_get_extension_flags(certificate); // also caches the extensions
    if ((flags & EXFLAG_INVALID) != 0)
        return "its extensions cannot be parsed";
    if ((flags & EXFLAG_CA) != 0)
        return kIsCa;
    if ((flags & EXFLAG_XKUSAGE) != 0 &&
        (X509_get_extended_key_usage(certificate) & XKU_SSL_CLIENT) == 0)
        return kNoClientAuth;
    return {};
}

int verify_client_certificate(int preverified, X509_STORE_CTX* store) {
    if (preverified != 1 || X509_STORE_CTX_get_error_depth(store) != 0)
        return preverified; // the chain's own verdict; only the leaf is checked here
    X509* leaf = X509_STORE_CTX_get_current_cert(store);
    if (leaf == nullptr)
        return 0;
    std::uint32_t flags = X509_get_extension_flags(leaf);
    if (client_certificate_problem(leaf).empty())
        return 1;
    X509_STORE_CTX_set_error(store, (flags & EXFLAG_CA) != 0 ? X509_V_ERR_INVALID_NON_CA
                                                             : X509_V_ERR_INVALID_PURPOSE);
    return 0;
}

std::string describe_client_verify_failure(const SSL* ssl) {
    switch (SSL_get_verify_result(ssl)) {
    case X509_V_ERR_INVALID_NON_CA:
        return kIsCa;
    case X509_V_ERR_INVALID_PURPOSE:
        return kNoClientAuth;
    default:
        return verify_failure(ssl);
    }
}

} // namespace rpmem::channel
