// SPDX-License-Identifier: BSD-3-Clause
#include "channel/tls_error.h"

#include <array>
#include <cerrno>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>
#include <openssl/x509.h>

namespace rpmem::channel {

namespace asio = boost::asio;

std::string drain_openssl_errors() {
    std::string text;
    while (unsigned long code = ERR_get_error()) {
        std::array<char, 256> line{};
        ERR_error_string_n(code, line.data(), line.size());
        if (!text.empty())
            text += "; ";
        text += line.data();
    }
    return text;
}

std::string verify_failure(const SSL* ssl) {
    long result = SSL_get_verify_result(ssl);
    if (result == X509_V_OK)
        return {};
    return X509_verify_cert_error_string(result);
}

bool is_certificate_refusal(const boost::system::error_code& ec) {
    if (ec.category() != asio::error::get_ssl_category())
        return false;
    int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED ||
        reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)
        return true;
    // Alerts received from the peer are reported as SSL_AD_REASON_OFFSET + the alert number.
    switch (reason - SSL_AD_REASON_OFFSET) {
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_CERTIFICATE_REVOKED:
    case SSL_AD_CERTIFICATE_EXPIRED:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_UNKNOWN_CA:
    case SSL_AD_ACCESS_DENIED:
    case SSL_AD_CERTIFICATE_REQUIRED:
        return true;
    default:
        return false;
    }
}

Error error_from_asio(const boost::system::error_code& ec, std::string_view what) {
    std::string message(what);
    message += ": ";
    if (ec == asio::error::eof) {
        message += "connection closed by the peer";
        return Error(ECONNRESET, std::move(message), ErrorSource::tls, ec.value());
    }
    if (ec == asio::ssl::error::stream_truncated) {
        message += "connection closed by the peer without a TLS close_notify";
        return Error(ECONNRESET, std::move(message), ErrorSource::tls, ec.value());
    }
    message += ec.message();
    if (ec == asio::error::operation_aborted)
        return Error(ECANCELED, std::move(message), ErrorSource::system, ECANCELED);
    if (ec.category() == asio::error::get_ssl_category()) {
        int errno_value = is_certificate_refusal(ec) ? EACCES : EPROTO;
        return Error(errno_value, std::move(message), ErrorSource::tls,
                     ERR_GET_REASON(static_cast<unsigned long>(ec.value())));
    }
    if (ec.category() == asio::error::get_netdb_category() ||
        ec.category() == asio::error::get_addrinfo_category())
        return Error(EHOSTUNREACH, std::move(message), ErrorSource::system, ec.value());
    if (ec.category() == boost::system::system_category() ||
        ec.category() == boost::system::generic_category())
        return Error(ec.value(), std::move(message), ErrorSource::system, ec.value());
    return Error(EIO, std::move(message), ErrorSource::tls, ec.value());
}

} // namespace rpmem::channel
