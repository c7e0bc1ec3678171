// SPDX-License-Identifier: BSD-3-Clause
// client::Settings for tests that use the client library against a TargetHost's rpmemd.
#pragma once

#include <chrono>
#include <string>

#include "channel/credentials.h"
#include "client/settings.h"

namespace rpmem::test {

// Settings with the client credentials `tls` (TargetHost::credentials().client() or
// TargetHost::client_tls(identity)), the provider, connect and operation timeouts of `timeout`
// (generous: the machine is small and shared), and blocking waits (no spin: spinning threads
// would compete with rpmemd for the two cores).
inline client::Settings client_settings(const channel::TlsFiles& tls, std::string provider = "tcp",
                                        std::chrono::seconds timeout = std::chrono::seconds(20)) {
    client::Settings settings;
    settings.tls_ca = tls.ca.string();
    settings.tls_cert = tls.certificate.string();
    settings.tls_key = tls.private_key.string();
    settings.provider = std::move(provider);
    settings.connect_timeout = timeout;
    settings.timeout = timeout;
    settings.spin = std::chrono::microseconds(0);
    return settings;
}

} // namespace rpmem::test
