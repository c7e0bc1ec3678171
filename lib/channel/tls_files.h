// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>

namespace rpmem::channel {

// Where one end's TLS material lives: the CA that signs the peer's certificate, this end's
// certificate and its private key (all PEM). Both ends need all three; a client without a
// certificate is only useful to show that the server refuses it.
struct TlsFiles {
    std::filesystem::path ca;
    std::filesystem::path certificate;
    std::filesystem::path private_key;
};

} // namespace rpmem::channel
