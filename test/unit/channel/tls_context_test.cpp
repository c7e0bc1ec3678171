// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <string>

#include <catch2/catch.hpp>

#include "channel/credentials.h"
#include "channel/tls_context.h"
#include "temp_dir.h"

using namespace rpmem::channel;
using rpmem::test::TempDir;

namespace {

CredentialFiles make_files(const TempDir& dir) {
    CredentialOptions options;
    options.server_names = {"localhost"};
    options.client_identity = "alice";
    auto files = write_credentials(dir.path(), options);
    REQUIRE(files);
    return *files;
}

} // namespace

TEST_CASE("contexts load for both roles, TLS 1.3 only") {
    TempDir dir;
    CredentialFiles files = make_files(dir);
    for (auto [role, tls] :
         {std::pair{TlsRole::server, files.server()}, std::pair{TlsRole::client, files.client()}}) {
        auto context = make_tls_context(tls, role);
        REQUIRE(context);
        SSL_CTX* ctx = (*context)->native_handle();
        CHECK(SSL_CTX_get_min_proto_version(ctx) == TLS1_3_VERSION);
        CHECK(SSL_CTX_get_max_proto_version(ctx) == TLS1_3_VERSION);
        CHECK((SSL_CTX_get_verify_mode(ctx) & SSL_VERIFY_PEER) != 0);
    }
    auto server = make_tls_context(files.server(), TlsRole::server);
    REQUIRE(server);
    CHECK((SSL_CTX_get_verify_mode((*server)->native_handle()) & SSL_VERIFY_FAIL_IF_NO_PEER_CERT) !=
          0);
}

TEST_CASE("a client without a certificate may be configured, a server may not") {
    TempDir dir;
    CredentialFiles files = make_files(dir);
    CHECK(make_tls_context(TlsFiles{files.ca_certificate, {}, {}}, TlsRole::client));
    auto server = make_tls_context(TlsFiles{files.ca_certificate, {}, {}}, TlsRole::server);
    REQUIRE_FALSE(server);
    CHECK(server.error().errno_value() == EINVAL);
    CHECK(server.error().message() == "no certificate file given");
}

TEST_CASE("unreadable files are reported with errno and path") {
    TempDir dir;
    CredentialFiles files = make_files(dir);
    TlsFiles tls = files.server();
    tls.ca = dir.path() / "missing.crt";
    auto context = make_tls_context(tls, TlsRole::server);
    REQUIRE_FALSE(context);
    CHECK(context.error().errno_value() == ENOENT);
    CHECK(context.error().message() ==
          "reading CA certificate " + tls.ca.string() + ": No such file or directory");
}

TEST_CASE("unusable contents are reported as EINVAL naming the file") {
    TempDir dir;
    CredentialFiles files = make_files(dir);

    SECTION("a key that does not belong to the certificate") {
        TlsFiles tls{files.ca_certificate, files.server_certificate, files.client_key};
        auto context = make_tls_context(tls, TlsRole::server);
        REQUIRE_FALSE(context);
        CHECK(context.error().errno_value() == EINVAL);
        CHECK_THAT(context.error().message(),
                   Catch::StartsWith("private key " + files.client_key.string() +
                                     " does not match certificate " +
                                     files.server_certificate.string()));
    }
    SECTION("a CA file that is not PEM") {
        TlsFiles tls = files.server();
        tls.ca = files.server_key; // readable, but holds a key, not certificates
        auto context = make_tls_context(tls, TlsRole::server);
        REQUIRE_FALSE(context);
        CHECK(context.error().errno_value() == EINVAL);
        CHECK_THAT(context.error().message(), Catch::Contains(files.server_key.string()));
    }
}
