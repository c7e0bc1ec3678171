// SPDX-License-Identifier: BSD-3-Clause
// A TLS client on plain OpenSSL and a blocking socket that sends whatever bytes a test wants
// (garbage, truncated or oversized frames, a Hello with foreign versions) and reads what
// comes back, each read bounded by a receive timeout. Independent of lib/channel on purpose.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <openssl/ssl.h>

#include "base/error.h"
#include "channel/tls_files.h"
#include "protocol/codec.h"

namespace rpmem::test {

class RawTlsClient {
public:
    // Connects to 127.0.0.1:`port` and completes the TLS handshake with `tls` (the server's
    // certificate is verified against tls.ca; its name is not checked).
    static Result<RawTlsClient> connect(std::uint16_t port, const channel::TlsFiles& tls);

    RawTlsClient(RawTlsClient&& other) noexcept;
    RawTlsClient& operator=(RawTlsClient&&) = delete;
    ~RawTlsClient();

    Result<void> send(std::span<const std::uint8_t> bytes);
    Result<void> send(const protocol::Request& request, std::uint32_t request_id);

    // The next frame from the server; ECONNRESET when the server closed the connection,
    // ETIMEDOUT after `timeout` without a whole frame.
    Result<protocol::DecodedFrame<protocol::Reply>> receive(std::chrono::milliseconds timeout);

    // Sends a Hello with this build's versions and returns the HelloReply.
    Result<protocol::HelloReply> hello();

private:
    RawTlsClient(int fd, SSL_CTX* context, SSL* ssl)
        : fd_(fd)
        , context_(context)
        , ssl_(ssl) {}
    Result<void> read_exactly(std::uint8_t* data, std::size_t length);

    int fd_ = -1;
    SSL_CTX* context_ = nullptr;
    SSL* ssl_ = nullptr;
};

} // namespace rpmem::test
