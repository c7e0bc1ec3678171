// SPDX-License-Identifier: BSD-3-Clause
#include "channel/peer_identity.h"

#include <algorithm>
#include <cerrno>

#include <openssl/crypto.h>
#include <openssl/x509.h>

#include "protocol/message_limits.h"

namespace rpmem::channel {

Result<std::string> peer_identity(const SSL* ssl) {
    X509* cert = SSL_get0_peer_certificate(ssl);
    if (!cert)
        return fail(EACCES, "the peer sent no certificate", ErrorSource::tls);
    X509_NAME* subject = X509_get_subject_name(cert);
    int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (index < 0)
        return fail(EACCES, "the peer certificate has no subject CN", ErrorSource::tls);
    if (X509_NAME_get_index_by_NID(subject, NID_commonName, index) >= 0)
        return fail(EACCES, "the peer certificate has more than one subject CN", ErrorSource::tls);

    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    unsigned char* utf8 = nullptr;
    int length = ASN1_STRING_to_UTF8(&utf8, data);
    if (length < 0)
        return fail(EACCES, "the peer certificate's CN is not valid text", ErrorSource::tls);
    std::string identity(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length));
    OPENSSL_free(utf8);

    bool printable = std::all_of(identity.begin(), identity.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
    });
    if (identity.empty() || identity.size() > protocol::kMaxIdentityLength || !printable)
        return fail(EACCES, "the peer certificate's CN is empty, too long or not printable",
                    ErrorSource::tls);
    return identity;
}

} // namespace rpmem::channel
