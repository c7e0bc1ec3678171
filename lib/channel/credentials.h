// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "channel/openssl_ptr.h"
#include "channel/tls_files.h"

namespace rpmem::channel {

// Making the TLS material of a deployment with OpenSSL 3's API: a CA, a server certificate
// naming the hosts clients will dial, and a client certificate whose subject CN is the client
// identity that rpmemd's allow list names. Keys are ECDSA P-256, signatures SHA-256, serials
// random. Used by `rpmemctl init` and by tests, which make certificates per test (also
// expired ones, hence the explicit validity period). Stateless functions; thread-safe.

// When a certificate is valid. Tests make an expired one by putting not_after in the past.
struct Validity {
    std::chrono::system_clock::time_point not_before;
    std::chrono::system_clock::time_point not_after;

    // From an hour ago (tolerating clock skew between hosts) until `days` from now.
    static Validity days_from_now(int days);
};

// A private key and the certificate binding it; owns both. Move-only.
class CertifiedKey {
public:
    CertifiedKey(KeyPtr key, X509Ptr certificate)
        : key_(std::move(key))
        , certificate_(std::move(certificate)) {}

    EVP_PKEY* key() const noexcept { return key_.get(); }
    X509* certificate() const noexcept { return certificate_.get(); }

    // Writes the certificate (mode 0644) and the unencrypted private key (mode 0600, whatever
    // the umask) as PEM. Refuses to replace existing files unless `overwrite`.
    Result<void> write(const std::filesystem::path& certificate_file,
                       const std::filesystem::path& key_file, bool overwrite) const;
    Result<void> write_certificate(const std::filesystem::path& file, bool overwrite) const;

private:
    KeyPtr key_;
    X509Ptr certificate_;
};

// A self-signed CA (basicConstraints CA:TRUE, keyCertSign) named `common_name`.
Result<CertifiedKey> make_certificate_authority(std::string_view common_name,
                                                const Validity& validity);

// A server certificate signed by `ca`: each name becomes a subjectAltName entry, an IP address
// (IPv4 or IPv6 text) as iPAddress, anything else as dNSName (letters, digits, '-', '.', '_'
// and a leading "*." only). The first name is also the subject CN. extendedKeyUsage
// serverAuth.
Result<CertifiedKey> make_server_certificate(const CertifiedKey& ca,
                                             std::span<const std::string> names,
                                             const Validity& validity);

// A client certificate signed by `ca` with subject CN = `identity` (1..64 printable
// characters). extendedKeyUsage clientAuth.
Result<CertifiedKey> make_client_certificate(const CertifiedKey& ca, std::string_view identity,
                                             const Validity& validity);

struct CredentialOptions {
    std::vector<std::string> server_names; // at least one
    std::string client_identity;
    std::string ca_name = "rpmem CA";
    Validity validity = Validity::days_from_now(825);
    bool overwrite = false;    // replace existing files
    bool write_ca_key = false; // also write ca.key (0600), to sign more client certificates later
};

// The files write_credentials() made, and the TlsFiles each end loads.
struct CredentialFiles {
    std::filesystem::path ca_certificate;     // ca.crt
    std::filesystem::path ca_key;             // ca.key, empty unless asked for
    std::filesystem::path server_certificate; // server.crt
    std::filesystem::path server_key;         // server.key
    std::filesystem::path client_certificate; // client.crt
    std::filesystem::path client_key;         // client.key

    TlsFiles server() const { return {ca_certificate, server_certificate, server_key}; }
    TlsFiles client() const { return {ca_certificate, client_certificate, client_key}; }
};

// Makes a CA, a server and a client certificate and writes ca.crt, server.crt, server.key,
// client.crt and client.key into `directory` (created if missing).
Result<CredentialFiles> write_credentials(const std::filesystem::path& directory,
                                          const CredentialOptions& options);

} // namespace rpmem::channel
