// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace rpmem::channel {

// unique_ptr owners for the OpenSSL objects this layer creates; each frees with its own
// OpenSSL function.
template <typename T, void (*Free)(T*)>
struct OpenSslDeleter {
    void operator()(T* object) const noexcept { Free(object); }
};

template <typename T, void (*Free)(T*)>
using OpenSslPtr = std::unique_ptr<T, OpenSslDeleter<T, Free>>;

inline void free_bio(BIO* bio) {
    BIO_free_all(bio);
}

using BioPtr = OpenSslPtr<BIO, free_bio>;
using BignumPtr = OpenSslPtr<BIGNUM, BN_free>;
using GeneralNamesPtr = OpenSslPtr<GENERAL_NAMES, GENERAL_NAMES_free>;
using GeneralNamePtr = OpenSslPtr<GENERAL_NAME, GENERAL_NAME_free>;
using KeyPtr = OpenSslPtr<EVP_PKEY, EVP_PKEY_free>;
using SslContextPtr = OpenSslPtr<SSL_CTX, SSL_CTX_free>;
using X509Ptr = OpenSslPtr<X509, X509_free>;
using X509ExtensionPtr = OpenSslPtr<X509_EXTENSION, X509_EXTENSION_free>;

} // namespace rpmem::channel
