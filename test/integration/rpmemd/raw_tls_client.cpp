// SPDX-License-Identifier: BSD-3-Clause
#include "raw_tls_client.h"

#include <cerrno>
#include <utility>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "protocol/frame_header.h"

namespace rpmem::test {

namespace {

Error tls_failure(std::string what) {
    unsigned long code = ERR_get_error();
    char text[256] = "no OpenSSL error";
    if (code != 0)
        ERR_error_string_n(code, text, sizeof(text));
    ERR_clear_error();
    return Error(EACCES, what + ": " + text, ErrorSource::tls);
}

} // namespace

Result<RawTlsClient> RawTlsClient::connect(std::uint16_t port, const channel::TlsFiles& tls) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(Error::from_errno(errno, "socket"));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
        int error = errno;
        ::close(fd);
        return fail(Error::from_errno(error, "connect"));
    }
    SSL_CTX* context = SSL_CTX_new(TLS_client_method());
    RawTlsClient client(fd, context, nullptr);
    if (context == nullptr)
        return fail(tls_failure("SSL_CTX_new"));
    SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_load_verify_locations(context, tls.ca.c_str(), nullptr) != 1)
        return fail(tls_failure("loading the CA"));
    if (!tls.certificate.empty() &&
        (SSL_CTX_use_certificate_chain_file(context, tls.certificate.c_str()) != 1 ||
         SSL_CTX_use_PrivateKey_file(context, tls.private_key.c_str(), SSL_FILETYPE_PEM) != 1))
        return fail(tls_failure("loading the client certificate"));
    client.ssl_ = SSL_new(context);
    if (client.ssl_ == nullptr || SSL_set_fd(client.ssl_, fd) != 1)
        return fail(tls_failure("SSL_new"));
    timeval limit{60, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    if (SSL_connect(client.ssl_) != 1)
        return fail(tls_failure("TLS handshake"));
    return client;
}

RawTlsClient::RawTlsClient(RawTlsClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1))
    , context_(std::exchange(other.context_, nullptr))
    , ssl_(std::exchange(other.ssl_, nullptr)) {}

RawTlsClient::~RawTlsClient() {
    if (ssl_ != nullptr)
        SSL_free(ssl_);
    if (context_ != nullptr)
        SSL_CTX_free(context_);
    if (fd_ >= 0)
        ::close(fd_);
}

Result<void> RawTlsClient::send(std::span<const std::uint8_t> bytes) {
    while (!bytes.empty()) {
        int written = SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()));
        if (written <= 0)
            return fail(tls_failure("SSL_write"));
        bytes = bytes.subspan(static_cast<std::size_t>(written));
    }
    return {};
}

Result<void> RawTlsClient::send(const protocol::Request& request, std::uint32_t request_id) {
    auto frame = protocol::encode(request, request_id);
    if (!frame)
        return fail(std::move(frame.error()));
    return send(*frame);
}

Result<void> RawTlsClient::read_exactly(std::uint8_t* data, std::size_t length) {
    while (length > 0) {
        int got = SSL_read(ssl_, data, static_cast<int>(length));
        if (got <= 0) {
            int error = SSL_get_error(ssl_, got);
            // A close with or without TLS close_notify (OpenSSL 3 reports the latter as an
            // "unexpected eof" SSL error), or a reset.
            bool closed = error == SSL_ERROR_ZERO_RETURN ||
                          (error == SSL_ERROR_SYSCALL && (errno == 0 || errno == ECONNRESET)) ||
                          (error == SSL_ERROR_SSL &&
                           ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING);
            if (closed) {
                ERR_clear_error();
                return fail(ECONNRESET, "the server closed the connection");
            }
            if (error == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK))
                return fail(ETIMEDOUT, "no frame from the server in time");
            if (error == SSL_ERROR_SYSCALL)
                return fail(Error::from_errno(errno, "reading"));
            return fail(tls_failure("SSL_read"));
        }
        data += got;
        length -= static_cast<std::size_t>(got);
    }
    return {};
}

Result<protocol::DecodedFrame<protocol::Reply>>
RawTlsClient::receive(std::chrono::milliseconds timeout) {
    timeval limit{static_cast<time_t>(timeout.count() / 1000),
                  static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    std::vector<std::uint8_t> frame(protocol::kFrameHeaderSize);
    if (auto read = read_exactly(frame.data(), frame.size()); !read)
        return fail(std::move(read.error()));
    auto header =
        protocol::decode_frame_header(std::span<const std::uint8_t, protocol::kFrameHeaderSize>(
                                          frame.data(), protocol::kFrameHeaderSize))
            .result;
    if (!header)
        return fail(std::move(header.error()));
    frame.resize(protocol::kFrameHeaderSize + header->body_length);
    if (auto read = read_exactly(frame.data() + protocol::kFrameHeaderSize, header->body_length);
        !read)
        return fail(std::move(read.error()));
    return protocol::decode_reply_frame(frame);
}

Result<protocol::HelloReply> RawTlsClient::hello() {
    if (auto sent = send(protocol::Hello{.software = "raw test client"}, 1); !sent)
        return fail(std::move(sent.error()));
    auto reply = receive(std::chrono::seconds(60));
    if (!reply)
        return fail(std::move(reply.error()));
    auto* hello = std::get_if<protocol::HelloReply>(&reply->message);
    if (hello == nullptr)
        return fail(EPROTO, "expected a HelloReply");
    return *hello;
}

} // namespace rpmem::test
