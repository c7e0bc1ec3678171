// SPDX-License-Identifier: BSD-3-Clause
#include "channel/credentials.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <functional>
#include <initializer_list>
#include <system_error>

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel/tls_error.h"

namespace rpmem::channel {

namespace {

constexpr std::size_t kMaxCommonNameLength = 64; // X.520 ub-common-name

tl::unexpected<Error> openssl_failure(std::string_view what) {
    return fail(EIO, fmt::format("{}: {}", what, drain_openssl_errors()), ErrorSource::tls);
}

Result<KeyPtr> generate_key() {
    KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    if (!key)
        return openssl_failure("generating a P-256 key");
    return key;
}

bool is_ip_address(const std::string& name) {
    unsigned char buffer[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, name.c_str(), buffer) == 1 ||
           inet_pton(AF_INET6, name.c_str(), buffer) == 1;
}

bool is_dns_name(std::string_view name) {
    if (name.starts_with("*."))
        name.remove_prefix(2);
    if (name.empty() || name.size() > 253 || name.front() == '.' || name.back() == '.')
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_';
    });
}

bool is_printable(std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; });
}

// A version 3 certificate for `key` named CN=`common_name`, with a random serial and the
// validity period; extensions and the signature come later.
Result<X509Ptr> new_certificate(EVP_PKEY* key, std::string_view common_name,
                                const Validity& validity) {
    X509Ptr cert(X509_new());
    BignumPtr serial(BN_new());
    if (!cert || !serial || X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
        BN_rand(serial.get(), 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
        !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())))
        return openssl_failure("creating a certificate");

    auto not_before = std::chrono::system_clock::to_time_t(validity.not_before);
    auto not_after = std::chrono::system_clock::to_time_t(validity.not_after);
    if (!ASN1_TIME_set(X509_getm_notBefore(cert.get()), not_before) ||
        !ASN1_TIME_set(X509_getm_notAfter(cert.get()), not_after))
        return openssl_failure("setting the validity period");

    if (X509_set_pubkey(cert.get(), key) != 1)
        return openssl_failure("setting the public key");
    const auto* cn = reinterpret_cast<const unsigned char*>(common_name.data());
    if (X509_NAME_add_entry_by_txt(X509_get_subject_name(cert.get()), "CN", MBSTRING_UTF8, cn,
                                   static_cast<int>(common_name.size()), -1, 0) != 1)
        return openssl_failure(fmt::format("setting the subject CN '{}'", common_name));
    return cert;
}

// An extension given in OpenSSL's configuration syntax; `issuer` may be `cert` itself.
Result<void> add_extension(X509* cert, X509* issuer, int nid, const char* value) {
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
    X509ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value));
    if (!extension || X509_add_ext(cert, extension.get(), -1) != 1)
        return openssl_failure(fmt::format("adding extension {} = {}", OBJ_nid2sn(nid), value));
    return {};
}

Result<void> sign(X509* cert, const CertifiedKey& issuer) {
    if (X509_set_issuer_name(cert, X509_get_subject_name(issuer.certificate())) != 1 ||
        X509_sign(cert, issuer.key(), EVP_sha256()) <= 0)
        return openssl_failure("signing the certificate");
    return {};
}

Result<void> add_subject_alt_names(X509* cert, std::span<const std::string> names) {
    GeneralNamesPtr alt_names(sk_GENERAL_NAME_new_null());
    if (!alt_names)
        return openssl_failure("allocating subjectAltName");
    for (const auto& name : names) {
        GeneralNamePtr entry(GENERAL_NAME_new());
        if (!entry)
            return openssl_failure("allocating subjectAltName");
        if (is_ip_address(name)) {
            ASN1_OCTET_STRING* address = a2i_IPADDRESS(name.c_str());
            if (!address)
                return openssl_failure(fmt::format("encoding IP address '{}'", name));
            GENERAL_NAME_set0_value(entry.get(), GEN_IPADD, address);
        } else {
            if (!is_dns_name(name))
                return fail(EINVAL, fmt::format("server name '{}' is neither an IP address nor "
                                                "a DNS name",
                                                name));
            ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
            if (!dns || ASN1_STRING_set(dns, name.data(), static_cast<int>(name.size())) != 1) {
                ASN1_IA5STRING_free(dns);
                return openssl_failure(fmt::format("encoding DNS name '{}'", name));
            }
            GENERAL_NAME_set0_value(entry.get(), GEN_DNS, dns);
        }
        if (sk_GENERAL_NAME_push(alt_names.get(), entry.get()) <= 0)
            return openssl_failure("adding a subjectAltName entry");
        entry.release(); // the stack owns it now
    }
    if (X509_add1_ext_i2d(cert, NID_subject_alt_name, alt_names.get(), 0, X509V3_ADD_DEFAULT) != 1)
        return openssl_failure("adding subjectAltName");
    return {};
}

using Extension = std::pair<int, const char*>; // NID and its value, as openssl.cnf writes it

// A fresh key and its certificate named `common_name`, with `extensions` in order; `issuer` is
// the certificate the authority key identifier refers to (nullptr: this one, a CA's own).
Result<CertifiedKey> make_key_and_certificate(std::string_view common_name,
                                              const Validity& validity, X509* issuer,
                                              std::initializer_list<Extension> extensions) {
    auto key = generate_key();
    if (!key)
        return fail(std::move(key.error()));
    auto cert = new_certificate(key->get(), common_name, validity);
    if (!cert)
        return fail(std::move(cert.error()));
    X509* x = cert->get();
    for (auto [nid, value] : extensions)
        if (auto ok = add_extension(x, issuer != nullptr ? issuer : x, nid, value); !ok)
            return fail(std::move(ok.error()));
    return CertifiedKey(std::move(*key), std::move(*cert));
}

// A leaf certificate for a fresh key, signed by `ca`, with the extensions every leaf has.
Result<CertifiedKey> make_leaf(const CertifiedKey& ca, std::string_view common_name,
                               const Validity& validity, const char* extended_key_usage) {
    return make_key_and_certificate(common_name, validity, ca.certificate(),
                                    {{NID_basic_constraints, "critical,CA:FALSE"},
                                     {NID_key_usage, "critical,digitalSignature"},
                                     {NID_ext_key_usage, extended_key_usage},
                                     {NID_subject_key_identifier, "hash"},
                                     {NID_authority_key_identifier, "keyid:always"}});
}

Result<std::string> to_pem(const std::function<int(BIO*)>& write, std::string_view what) {
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || write(bio.get()) != 1)
        return openssl_failure(fmt::format("encoding {} as PEM", what));
    char* data = nullptr;
    long length = BIO_get_mem_data(bio.get(), &data);
    std::string pem(data, static_cast<std::size_t>(length));
    OPENSSL_cleanse(data, static_cast<std::size_t>(length));
    return pem;
}

// Creates `file` with exactly `mode` and writes `content`; O_NOFOLLOW so that a planted
// symlink cannot redirect a private key.
Result<void> write_file(const std::filesystem::path& file, std::string_view content, mode_t mode,
                        bool overwrite) {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (overwrite ? O_TRUNC : O_EXCL);
    int fd = ::open(file.c_str(), flags, mode);
    if (fd < 0)
        return fail(Error::from_errno(errno, fmt::format("creating {}", file.string())));
    auto fail_closing = [&](std::string_view step) {
        int saved = errno;
        ::close(fd);
        return fail(Error::from_errno(saved, fmt::format("{} {}", step, file.string())));
    };
    if (::fchmod(fd, mode) != 0) // the umask may have removed bits, an old file may have more
        return fail_closing("setting the mode of");
    while (!content.empty()) {
        ssize_t written = ::write(fd, content.data(), content.size());
        if (written < 0 && errno == EINTR)
            continue;
        if (written < 0)
            return fail_closing("writing");
        content.remove_prefix(static_cast<std::size_t>(written));
    }
    if (::fsync(fd) != 0)
        return fail_closing("syncing");
    if (::close(fd) != 0)
        return fail(Error::from_errno(errno, fmt::format("closing {}", file.string())));
    return {};
}

// The unencrypted PKCS#8 PEM of `key`, mode 0600; the PEM text is wiped from memory after use.
Result<void> write_private_key(const std::filesystem::path& file, EVP_PKEY* key, bool overwrite) {
    auto pem = to_pem(
        [key](BIO* bio) {
            return PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
        },
        "private key");
    if (!pem)
        return fail(std::move(pem.error()));
    auto written = write_file(file, *pem, 0600, overwrite);
    OPENSSL_cleanse(pem->data(), pem->size());
    return written;
}

} // namespace

Validity Validity::days_from_now(int days) {
    auto now = std::chrono::system_clock::now();
    return {now - std::chrono::hours(1), now + std::chrono::hours(24) * days};
}

Result<void> CertifiedKey::write_certificate(const std::filesystem::path& file,
                                             bool overwrite) const {
    auto pem =
        to_pem([this](BIO* bio) { return PEM_write_bio_X509(bio, certificate()); }, "certificate");
    if (!pem)
        return fail(std::move(pem.error()));
    return write_file(file, *pem, 0644, overwrite);
}

Result<void> CertifiedKey::write(const std::filesystem::path& certificate_file,
                                 const std::filesystem::path& key_file, bool overwrite) const {
    if (auto ok = write_certificate(certificate_file, overwrite); !ok)
        return ok;
    return write_private_key(key_file, key(), overwrite);
}

Result<CertifiedKey> make_certificate_authority(std::string_view common_name,
                                                const Validity& validity) {
    if (common_name.empty() || common_name.size() > kMaxCommonNameLength ||
        !is_printable(common_name))
        return fail(EINVAL, fmt::format("CA name '{}' must be 1 to {} printable characters",
                                        common_name, kMaxCommonNameLength));
    // The subject key identifier must exist before the authority key identifier refers to it.
    auto made = make_key_and_certificate(common_name, validity, nullptr,
                                         {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                          {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                          {NID_subject_key_identifier, "hash"},
                                          {NID_authority_key_identifier, "keyid:always"}});
    if (!made)
        return made;
    CertifiedKey ca = std::move(*made);
    if (auto ok = sign(ca.certificate(), ca); !ok)
        return fail(std::move(ok.error()));
    return ca;
}

Result<CertifiedKey> make_server_certificate(const CertifiedKey& ca,
                                             std::span<const std::string> names,
                                             const Validity& validity) {
    if (names.empty())
        return fail(EINVAL, "a server certificate needs at least one name");
    if (names.front().size() > kMaxCommonNameLength)
        return fail(EINVAL, fmt::format("server name '{}' is longer than {} characters",
                                        names.front(), kMaxCommonNameLength));
    auto leaf = make_leaf(ca, names.front(), validity, "serverAuth");
    if (!leaf)
        return leaf;
    if (auto ok = add_subject_alt_names(leaf->certificate(), names); !ok)
        return fail(std::move(ok.error()));
    if (auto ok = sign(leaf->certificate(), ca); !ok)
        return fail(std::move(ok.error()));
    return leaf;
}

Result<CertifiedKey> make_client_certificate(const CertifiedKey& ca, std::string_view identity,
                                             const Validity& validity) {
    if (identity.empty() || identity.size() > kMaxCommonNameLength || !is_printable(identity))
        return fail(EINVAL, fmt::format("client identity '{}' must be 1 to {} printable "
                                        "characters",
                                        identity, kMaxCommonNameLength));
    auto leaf = make_leaf(ca, identity, validity, "clientAuth");
    if (!leaf)
        return leaf;
    if (auto ok = sign(leaf->certificate(), ca); !ok)
        return fail(std::move(ok.error()));
    return leaf;
}

Result<CredentialFiles> write_credentials(const std::filesystem::path& directory,
                                          const CredentialOptions& options) {
    CredentialFiles files{directory / "ca.crt",     {},
                          directory / "server.crt", directory / "server.key",
                          directory / "client.crt", directory / "client.key"};
    if (options.write_ca_key)
        files.ca_key = directory / "ca.key";

    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec)
        return fail(Error::from_errno(ec.value(), fmt::format("creating {}", directory.string())));
    if (!options.overwrite) {
        // Refuse before writing anything, so that a refusal leaves no half-made set behind.
        for (const auto* file : {&files.ca_certificate, &files.ca_key, &files.server_certificate,
                                 &files.server_key, &files.client_certificate, &files.client_key}) {
            if (!file->empty() && std::filesystem::symlink_status(*file, ec).type() !=
                                      std::filesystem::file_type::not_found)
                return fail(EEXIST, fmt::format("{} already exists", file->string()));
        }
    }

    auto ca = make_certificate_authority(options.ca_name, options.validity);
    if (!ca)
        return fail(std::move(ca.error()).add_context("making the CA"));
    auto server = make_server_certificate(*ca, options.server_names, options.validity);
    if (!server)
        return fail(std::move(server.error()).add_context("making the server certificate"));
    auto client = make_client_certificate(*ca, options.client_identity, options.validity);
    if (!client)
        return fail(std::move(client.error()).add_context("making the client certificate"));

    Result<void> written = ca->write_certificate(files.ca_certificate, options.overwrite);
    if (written)
        written = server->write(files.server_certificate, files.server_key, options.overwrite);
    if (written)
        written = client->write(files.client_certificate, files.client_key, options.overwrite);
    if (written && options.write_ca_key)
        written = write_private_key(files.ca_key, ca->key(), options.overwrite);
    if (!written)
        return fail(std::move(written.error()));
    return files;
}

} // namespace rpmem::channel
