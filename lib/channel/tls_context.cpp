// SPDX-License-Identifier: BSD-3-Clause
#include "channel/tls_context.h"

#include <cerrno>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <unistd.h>

#include "channel/client_certificate_policy.h"
#include "channel/openssl_ptr.h"
#include "channel/tls_error.h"

namespace rpmem::channel {

namespace {

tl::unexpected<Error> content_failure(std::string_view what, const std::filesystem::path& file) {
    return fail(EINVAL, fmt::format("{} {}: {}", what, file.string(), drain_openssl_errors()),
                ErrorSource::tls);
}

// OpenSSL's own messages for a missing file are obscure; check first and report errno.
Result<void> check_readable(const std::filesystem::path& file, std::string_view what) {
    if (file.empty())
        return fail(EINVAL, fmt::format("no {} file given", what));
    if (::access(file.c_str(), R_OK) != 0)
        return fail(Error::from_errno(errno, fmt::format("reading {} {}", what, file.string())));
    return {};
}

} // namespace

Result<std::unique_ptr<boost::asio::ssl::context>> make_tls_context(const TlsFiles& files,
                                                                    TlsRole role) {
    bool has_identity = !files.certificate.empty() || !files.private_key.empty();
    if (auto ok = check_readable(files.ca, "CA certificate"); !ok)
        return fail(std::move(ok.error()));
    // A client without certificate may be configured (the server will refuse it); a server
    // always needs one.
    if (role == TlsRole::server || has_identity) {
        if (auto ok = check_readable(files.certificate, "certificate"); !ok)
            return fail(std::move(ok.error()));
        if (auto ok = check_readable(files.private_key, "private key"); !ok)
            return fail(std::move(ok.error()));
    }

    SslContextPtr ctx(
        SSL_CTX_new(role == TlsRole::client ? TLS_client_method() : TLS_server_method()));
    if (!ctx)
        return fail(ENOMEM, "creating a TLS context: " + drain_openssl_errors(), ErrorSource::tls);
    SSL_CTX* raw = ctx.get();
    if (SSL_CTX_set_min_proto_version(raw, TLS1_3_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(raw, TLS1_3_VERSION) != 1)
        return fail(EPROTONOSUPPORT,
                    "restricting the TLS context to TLS 1.3: " + drain_openssl_errors(),
                    ErrorSource::tls);
    SSL_CTX_set_options(raw, SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);

    if (SSL_CTX_load_verify_locations(raw, files.ca.c_str(), nullptr) != 1)
        return content_failure("loading CA certificate", files.ca);
    if (has_identity || role == TlsRole::server) {
        if (SSL_CTX_use_certificate_chain_file(raw, files.certificate.c_str()) != 1)
            return content_failure("loading certificate", files.certificate);
        // OpenSSL checks the key against the certificate while loading it; say so plainly.
        bool loaded =
            SSL_CTX_use_PrivateKey_file(raw, files.private_key.c_str(), SSL_FILETYPE_PEM) == 1;
        bool mismatch =
            !loaded && ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
        if (!loaded && !mismatch)
            return content_failure("loading private key", files.private_key);
        if (mismatch || SSL_CTX_check_private_key(raw) != 1)
            return fail(EINVAL,
                        fmt::format("private key {} does not match certificate {}: {}",
                                    files.private_key.string(), files.certificate.string(),
                                    drain_openssl_errors()),
                        ErrorSource::tls);
    }

    if (role == TlsRole::server) {
        // Beyond the chain: the client's certificate must be a client's (not a CA, clientAuth).
        SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                           verify_client_certificate);
        SSL_CTX_set_num_tickets(raw, 0);
        // Tell clients which CA we accept, so that one with several certificates picks right.
        STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.ca.c_str());
        if (!names)
            return content_failure("reading CA names from", files.ca);
        SSL_CTX_set_client_CA_list(raw, names);
    } else {
        SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
    }

    try {
        auto context = std::make_unique<boost::asio::ssl::context>(ctx.get());
        ctx.release(); // the Asio context owns it now
        return context;
    } catch (const std::exception& e) {
        return fail(ENOMEM, fmt::format("wrapping the TLS context: {}", e.what()),
                    ErrorSource::tls);
    }
}

} // namespace rpmem::channel
