// SPDX-License-Identifier: BSD-3-Clause
// The real rpmemd refuses, clearly, every client it must not serve: a certificate from another
// CA, no client certificate, an expired certificate, an identity not on the allow list; and a
// client refuses a server whose certificate does not name the host it dialled. Each refusal
// leaves the daemon serving the next, good, client.
#include <cerrno>
#include <chrono>
#include <cstdio>

#include <catch2/catch.hpp>
#include <openssl/pem.h>

#include "channel/credentials.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using namespace std::chrono_literals;

namespace {

void check_still_serving(TargetHost& host) {
    auto good = host.connect();
    INFO((good ? std::string() : good.error().message()));
    REQUIRE(good);
    CHECK((*good)->call(protocol::StatusRequest{}));
}

} // namespace

TEST_CASE("a client certificate from another CA is refused") {
    TargetHost host;
    TempDir elsewhere;
    channel::CredentialOptions options;
    options.server_names = {"localhost", "127.0.0.1"};
    options.client_identity = "alice";
    auto foreign = channel::write_credentials(elsewhere.path(), options);
    REQUIRE(foreign);

    SECTION("the client trusts our CA but its certificate is foreign") {
        channel::TlsFiles tls{host.credentials().ca_certificate, foreign->client_certificate,
                              foreign->client_key};
        auto client = host.connect(tls);
        REQUIRE_FALSE(client);
        CHECK(client.error().errno_value() == EACCES);
        CHECK_THAT(client.error().message(), Catch::Contains("refused by the server"));
    }
    SECTION("the client trusts another CA: the server's certificate is refused") {
        auto client = host.connect(foreign->client());
        REQUIRE_FALSE(client);
        CHECK(client.error().errno_value() == EACCES);
        CHECK_THAT(client.error().message(), Catch::Contains("server certificate rejected"));
    }
    check_still_serving(host);
}

TEST_CASE("a client without a certificate is refused") {
    TargetHost host;
    auto client = host.connect(channel::TlsFiles{host.credentials().ca_certificate, {}, {}});
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == EACCES);
    CHECK_THAT(client.error().message(), Catch::Contains("certificate none"));
    check_still_serving(host);
    CHECK(host.wait_for_log("refused connection from 127.0.0.1"));
}

TEST_CASE("an expired client certificate is refused") {
    TargetHost host;
    auto ca = host.test_ca();
    auto now = std::chrono::system_clock::now();
    auto expired = channel::make_client_certificate(ca, "alice", {now - 48h, now - 24h});
    REQUIRE(expired);
    REQUIRE(expired->write(host.dir() / "expired.crt", host.dir() / "expired.key", false));

    auto client = host.connect(channel::TlsFiles{
        host.credentials().ca_certificate, host.dir() / "expired.crt", host.dir() / "expired.key"});
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == EACCES);
    CHECK(host.wait_for_log("expired")); // the client may hear of it before the log does
    check_still_serving(host);
}

TEST_CASE("a server certificate not naming the dialled host is refused by the client") {
    TargetHost host;
    auto client = host.connect({}, "otherhost.example");
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == EACCES);
    CHECK_THAT(client.error().message(), Catch::Contains("otherhost.example"));
    check_still_serving(host);
}

TEST_CASE("an identity missing from allow-client is refused; one on it is served") {
    TargetHost host({.config_lines = {"allow-client = bob", "allow-client = carol"}});
    auto alice = host.connect();
    REQUIRE_FALSE(alice);
    CHECK(alice.error().errno_value() == EPERM);
    CHECK_THAT(alice.error().message(), Catch::Contains("'alice' is not allowed"));

    auto ca = host.test_ca();
    auto carol = channel::make_client_certificate(ca, "carol", channel::Validity::days_from_now(1));
    REQUIRE(carol);
    REQUIRE(carol->write(host.dir() / "carol.crt", host.dir() / "carol.key", false));
    auto client = host.connect(channel::TlsFiles{
        host.credentials().ca_certificate, host.dir() / "carol.crt", host.dir() / "carol.key"});
    INFO((client ? std::string() : client.error().message()));
    REQUIRE(client);
    CHECK((*client)->hello().identity == "carol");
    CHECK(host.wait_for_log("identity 'alice' is not allowed"));
}

namespace {

// A client certificate for `identity` signed by the test CA with the openssl CLI, carrying
// exactly the extensions in `extensions` (OpenSSL config syntax); returns its TlsFiles.
channel::TlsFiles openssl_client_certificate(TargetHost& host, const std::string& name,
                                             const std::string& extensions) {
    const auto& files = host.credentials();
    std::string key = host.dir() / (name + ".key");
    std::string request = host.dir() / (name + ".csr");
    std::string certificate = host.dir() / (name + ".crt");
    std::string config = host.dir().write(name + ".ext", extensions);
    auto made = run({"/usr/bin/openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                     "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-subj", "/CN=alice",
                     "-out", request});
    INFO(made.err);
    REQUIRE(made.status == 0);
    auto signed_by_ca =
        run({"/usr/bin/openssl", "x509", "-req", "-in", request, "-CA",
             files.ca_certificate.string(), "-CAkey", files.ca_key.string(), "-set_serial", "4242",
             "-days", "1", "-extfile", config, "-out", certificate});
    INFO(signed_by_ca.err);
    REQUIRE(signed_by_ca.status == 0);
    return channel::TlsFiles{files.ca_certificate, certificate, key};
}

} // namespace

TEST_CASE("a client certificate that is a CA is refused, naming the reason") {
    TargetHost host;
    auto tls = openssl_client_certificate(host, "ca-client",
                                          "basicConstraints = critical, CA:TRUE\n"
                                          "keyUsage = critical, digitalSignature, keyCertSign\n"
                                          "extendedKeyUsage = clientAuth\n");
    auto client = host.connect(tls);
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == EACCES);
    CHECK(host.wait_for_log("it is a CA certificate (basicConstraints CA:TRUE)"));
    check_still_serving(host);
}

TEST_CASE("a client certificate without clientAuth in its extendedKeyUsage is refused") {
    TargetHost host;
    auto tls = openssl_client_certificate(host, "server-only",
                                          "basicConstraints = critical, CA:FALSE\n"
                                          "keyUsage = critical, digitalSignature\n"
                                          "extendedKeyUsage = serverAuth\n");
    auto client = host.connect(tls);
    REQUIRE_FALSE(client);
    CHECK(client.error().errno_value() == EACCES);
    CHECK(host.wait_for_log("lacks clientAuth"));
    check_still_serving(host);
}

TEST_CASE("a client certificate without extendedKeyUsage is accepted") {
    TargetHost host;
    auto tls = openssl_client_certificate(host, "no-eku",
                                          "basicConstraints = critical, CA:FALSE\n"
                                          "keyUsage = critical, digitalSignature\n");
    auto client = host.connect(tls);
    INFO((client ? std::string() : client.error().message()));
    REQUIRE(client);
    CHECK((*client)->hello().identity == "alice");
}
