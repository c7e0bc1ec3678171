// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include "channel/credentials.h"
#include "temp_dir.h"

using namespace rpmem::channel;
using rpmem::test::TempDir;
namespace fs = std::filesystem;

namespace {

X509Ptr read_certificate(const fs::path& file) {
    std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(file.c_str(), "r"), &std::fclose);
    REQUIRE(in);
    X509Ptr cert(PEM_read_X509(in.get(), nullptr, nullptr, nullptr));
    REQUIRE(cert);
    return cert;
}

KeyPtr read_key(const fs::path& file) {
    std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(file.c_str(), "r"), &std::fclose);
    REQUIRE(in);
    KeyPtr key(PEM_read_PrivateKey(in.get(), nullptr, nullptr, nullptr));
    REQUIRE(key);
    return key;
}

mode_t mode_of(const fs::path& file) {
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

std::string common_name(X509* cert) {
    char buffer[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buffer, sizeof(buffer));
    return buffer;
}

// The subjectAltName entries as "DNS:name" / "IP:address" strings.
std::vector<std::string> alt_names(X509* cert) {
    std::vector<std::string> names;
    auto* general =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
    for (int i = 0; general && i < sk_GENERAL_NAME_num(general); ++i) {
        GENERAL_NAME* name = sk_GENERAL_NAME_value(general, i);
        if (name->type == GEN_DNS) {
            names.push_back("DNS:" + std::string(reinterpret_cast<const char*>(
                                                     ASN1_STRING_get0_data(name->d.dNSName)),
                                                 ASN1_STRING_length(name->d.dNSName)));
        } else if (name->type == GEN_IPADD) {
            // OpenSSL formats the address itself (IPv6 in full, uncompressed).
            STACK_OF(CONF_VALUE)* values = i2v_GENERAL_NAME(nullptr, name, nullptr);
            REQUIRE(values);
            REQUIRE(sk_CONF_VALUE_num(values) == 1);
            names.push_back("IP:" + std::string(sk_CONF_VALUE_value(values, 0)->value));
            sk_CONF_VALUE_pop_free(values, X509V3_conf_free);
        }
    }
    GENERAL_NAMES_free(general);
    return names;
}

bool signed_by(X509* cert, X509* issuer) {
    return X509_verify(cert, X509_get0_pubkey(issuer)) == 1;
}

CredentialOptions options() {
    CredentialOptions o;
    o.server_names = {"localhost", "rpmem.example", "127.0.0.1", "::1"};
    o.client_identity = "alice";
    return o;
}

} // namespace

TEST_CASE("write_credentials makes a CA, a server and a client certificate") {
    TempDir dir;
    auto files = write_credentials(dir.path() / "tls", options());
    REQUIRE(files);
    CHECK(files->ca_certificate == dir.path() / "tls" / "ca.crt");
    CHECK(files->ca_key.empty());
    CHECK_FALSE(fs::exists(dir.path() / "tls" / "ca.key"));

    // Private keys are for their owner only, whatever the umask; certificates are public.
    CHECK(mode_of(files->server_key) == 0600);
    CHECK(mode_of(files->client_key) == 0600);
    CHECK(mode_of(files->ca_certificate) == 0644);
    CHECK(mode_of(files->server_certificate) == 0644);
    CHECK(mode_of(files->client_certificate) == 0644);

    X509Ptr ca = read_certificate(files->ca_certificate);
    X509Ptr server = read_certificate(files->server_certificate);
    X509Ptr client = read_certificate(files->client_certificate);

    CHECK(common_name(ca.get()) == "rpmem CA");
    CHECK(X509_check_ca(ca.get()) == 1);
    CHECK(signed_by(ca.get(), ca.get()));

    CHECK(signed_by(server.get(), ca.get()));
    CHECK(X509_check_ca(server.get()) == 0);
    CHECK(common_name(server.get()) == "localhost");
    CHECK(alt_names(server.get()) == std::vector<std::string>{"DNS:localhost", "DNS:rpmem.example",
                                                              "IP:127.0.0.1",
                                                              "IP:0:0:0:0:0:0:0:1"});
    CHECK(X509_check_host(server.get(), "rpmem.example", 0, 0, nullptr) == 1);
    CHECK(X509_check_ip_asc(server.get(), "127.0.0.1", 0) == 1);
    CHECK(X509_check_ip_asc(server.get(), "::1", 0) == 1);
    CHECK(X509_check_host(server.get(), "other.example", 0, 0, nullptr) == 0);
    CHECK(X509_check_purpose(server.get(), X509_PURPOSE_SSL_SERVER, 0) == 1);

    CHECK(signed_by(client.get(), ca.get()));
    CHECK(common_name(client.get()) == "alice");
    CHECK(X509_check_purpose(client.get(), X509_PURPOSE_SSL_CLIENT, 0) == 1);
    CHECK(X509_check_purpose(client.get(), X509_PURPOSE_SSL_SERVER, 0) == 0);

    // Each key belongs to its certificate.
    KeyPtr server_key = read_key(files->server_key);
    KeyPtr client_key = read_key(files->client_key);
    CHECK(X509_check_private_key(server.get(), server_key.get()) == 1);
    CHECK(X509_check_private_key(client.get(), client_key.get()) == 1);
    CHECK(X509_check_private_key(client.get(), server_key.get()) == 0);
}

TEST_CASE("existing files are kept unless overwrite is asked for") {
    TempDir dir;
    REQUIRE(write_credentials(dir.path(), options()));
    X509Ptr first = read_certificate(dir.path() / "ca.crt");

    auto again = write_credentials(dir.path(), options());
    REQUIRE_FALSE(again);
    CHECK(again.error().errno_value() == EEXIST);
    CHECK(again.error().message() == (dir.path() / "ca.crt").string() + " already exists");
    CHECK(X509_cmp(first.get(), read_certificate(dir.path() / "ca.crt").get()) == 0);

    // Overwriting also resets a loosened key mode.
    REQUIRE(::chmod((dir.path() / "client.key").c_str(), 0644) == 0);
    CredentialOptions o = options();
    o.overwrite = true;
    o.write_ca_key = true;
    auto replaced = write_credentials(dir.path(), o);
    REQUIRE(replaced);
    CHECK(X509_cmp(first.get(), read_certificate(dir.path() / "ca.crt").get()) != 0);
    CHECK(mode_of(dir.path() / "client.key") == 0600);
    CHECK(replaced->ca_key == dir.path() / "ca.key");
    CHECK(mode_of(replaced->ca_key) == 0600);
    KeyPtr ca_key = read_key(replaced->ca_key);
    CHECK(X509_check_private_key(read_certificate(replaced->ca_certificate).get(), ca_key.get()) ==
          1);
}

TEST_CASE("a key is never written through a symlink") {
    TempDir dir;
    fs::path target = dir.path() / "elsewhere";
    fs::create_symlink(target, dir.path() / "client.key");
    CredentialOptions o = options();
    o.overwrite = true; // even when overwriting
    auto files = write_credentials(dir.path(), o);
    REQUIRE_FALSE(files);
    CHECK(files.error().errno_value() == ELOOP);
    CHECK_FALSE(fs::exists(target));
}

TEST_CASE("the validity period is what was asked for, also in the past") {
    auto now = std::chrono::system_clock::now();
    auto ca = make_certificate_authority("test CA", Validity::days_from_now(1));
    REQUIRE(ca);
    Validity expired{now - std::chrono::hours(48), now - std::chrono::hours(24)};
    auto client = make_client_certificate(*ca, "bob", expired);
    REQUIRE(client);
    CHECK(X509_cmp_current_time(X509_get0_notAfter(client->certificate())) < 0);
    CHECK(X509_cmp_current_time(X509_get0_notAfter(ca->certificate())) > 0);
    CHECK(X509_cmp_current_time(X509_get0_notBefore(ca->certificate())) < 0);

    Validity future{now + std::chrono::hours(24), now + std::chrono::hours(48)};
    auto early = make_server_certificate(*ca, std::vector<std::string>{"localhost"}, future);
    REQUIRE(early);
    CHECK(X509_cmp_current_time(X509_get0_notBefore(early->certificate())) > 0);
}

TEST_CASE("bad names and identities are refused") {
    auto ca = make_certificate_authority("test CA", Validity::days_from_now(1));
    REQUIRE(ca);
    auto validity = Validity::days_from_now(1);

    auto no_names = make_server_certificate(*ca, {}, validity);
    REQUIRE_FALSE(no_names);
    CHECK(no_names.error().errno_value() == EINVAL);

    auto bad_dns = make_server_certificate(*ca, std::vector<std::string>{"a,DNS:evil"}, validity);
    REQUIRE_FALSE(bad_dns);
    CHECK(bad_dns.error().errno_value() == EINVAL);
    CHECK(bad_dns.error().message() ==
          "server name 'a,DNS:evil' is neither an IP address nor a DNS name");

    for (std::string identity : {std::string(), std::string(65, 'x'), std::string("a\nb")}) {
        auto client = make_client_certificate(*ca, identity, validity);
        REQUIRE_FALSE(client);
        CHECK(client.error().errno_value() == EINVAL);
    }
    CHECK(make_client_certificate(*ca, std::string(64, 'x'), validity));
}
