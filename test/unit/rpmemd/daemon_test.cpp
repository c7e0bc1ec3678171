// SPDX-License-Identifier: BSD-3-Clause
// The daemon's small edges: the listen address, the local address towards a client, the
// sd_notify datagram; and a Daemon in this process (with a test data plane) serving a real TLS
// client and, when stopped, fencing the data plane of a session that still holds a pool.
#include <cerrno>
#include <string>

#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "channel/client.h"
#include "channel/credentials.h"
#include "pool_fixtures.h"
#include "poolset/parser.h"
#include "poolset/pool_mapping.h"
#include "rpmemd/supervisor/daemon.h"
#include "rpmemd/supervisor/local_address.h"
#include "rpmemd/supervisor/systemd_notify.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;

TEST_CASE("listen addresses: wildcards, addresses and names") {
    CHECK(*listen_address("0.0.0.0") == "0.0.0.0");
    CHECK(*listen_address("::") == "::");
    CHECK(*listen_address("") == "0.0.0.0");
    CHECK(*listen_address("127.0.0.1") == "127.0.0.1");
    CHECK(*listen_address("::1") == "::1");
    auto local = listen_address("localhost");
    REQUIRE(local);
    CHECK((*local == "127.0.0.1" || *local == "::1"));
    auto bad = listen_address("no-such-host.invalid");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().errno_value() == EINVAL);
    CHECK_THAT(bad.error().message(), Catch::Contains("no-such-host.invalid"));
}

TEST_CASE("the local address towards a client") {
    CHECK(local_address_towards("127.0.0.1") == "127.0.0.1");
    CHECK(local_address_towards("::ffff:127.0.0.1") == "127.0.0.1");
    CHECK(local_address_towards("not an address") == std::nullopt);
    CHECK(is_wildcard_address("0.0.0.0"));
    CHECK(is_wildcard_address("::"));
    CHECK_FALSE(is_wildcard_address("127.0.0.1"));
}

TEST_CASE("sd_notify: one datagram to the path or abstract name systemd gives") {
    CHECK(notify_systemd("", "READY=1")); // not under systemd: nothing to do
    CHECK_FALSE(notify_systemd("relative/path", "READY=1"));

    test::TempDir dir;
    for (bool abstract : {false, true}) {
        CAPTURE(abstract);
        std::string name = abstract ? "@rpmemd-test-" + std::to_string(::getpid())
                                    : (dir.path() / "notify").string();
        UniqueFd socket(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        REQUIRE(socket.valid());
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::copy(name.begin(), name.end(), address.sun_path);
        if (abstract)
            address.sun_path[0] = '\0';
        auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
        REQUIRE(::bind(socket.get(), reinterpret_cast<sockaddr*>(&address), length) == 0);

        REQUIRE(notify_systemd(name, "READY=1"));
        char buffer[64] = {};
        ssize_t got = ::recv(socket.get(), buffer, sizeof(buffer), 0);
        CHECK(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0) == "READY=1");
    }
}

namespace {

class CountingPlane final : public DataPlane {
public:
    explicit CountingPlane(int& stops)
        : stops_(stops) {
        info_.path.provider = "tcp";
        info_.path.host = "127.0.0.1";
        info_.path.port = 1;
        info_.path.lanes = 1;
    }
    const DataPlaneInfo& info() const noexcept override { return info_; }
    void stop() noexcept override {
        if (!stopped_)
            ++stops_;
        stopped_ = true;
    }

private:
    DataPlaneInfo info_;
    int& stops_;
    bool stopped_ = false;
};

} // namespace

TEST_CASE("a Daemon in this process serves TLS clients and fences sessions when stopped") {
    test::TempDir dir;
    channel::CredentialOptions options;
    options.server_names = {"127.0.0.1"};
    options.client_identity = "alice";
    auto files = channel::write_credentials(dir.path() / "tls", options);
    REQUIRE(files);
    dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 1));

    Config config;
    config.poolset_dir = dir / "sets";
    config.listen_host = "127.0.0.1";
    config.listen_port = 0;
    config.tls_ca = files->ca_certificate.string();
    config.tls_cert = files->server_certificate.string();
    config.tls_key = files->server_key.string();
    int stops = 0;
    auto daemon = Daemon::start(
        config, [&stops](const DataPlaneRequest&) -> Result<std::unique_ptr<DataPlane>> {
            return std::make_unique<CountingPlane>(stops);
        });
    INFO((daemon ? std::string() : daemon.error().message()));
    REQUIRE(daemon);
    REQUIRE((*daemon)->port() != 0);

    channel::ClientConfig client_config;
    client_config.host = "127.0.0.1";
    client_config.port = (*daemon)->port();
    client_config.tls = files->client();
    auto client = channel::Client::connect(client_config);
    INFO((client ? std::string() : client.error().message()));
    REQUIRE(client);
    protocol::CreateRequest create;
    create.pool_set = "pool.set";
    create.lanes = 1;
    create.attributes = test::pmemobj_attributes();
    auto created = channel::expect<protocol::CreateReply>((*client)->call(create), "create");
    INFO((created ? std::string() : created.error().message()));
    REQUIRE(created);
    auto status =
        channel::expect<protocol::StatusReply>((*client)->call(protocol::StatusRequest{}), "s");
    REQUIRE(status);
    CHECK(status->sessions == 1);
    CHECK(status->pools_in_use == 1);

    (*daemon)->stop();
    CHECK(stops == 1);
    auto reopened = poolset::PoolMapping::open(
        *poolset::parse(test::pool_set_text(dir.path(), "pool", 1), "pool.set"));
    CHECK(reopened);
}
