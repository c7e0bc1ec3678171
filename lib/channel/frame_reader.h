// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/read.hpp>
#include <boost/system/error_code.hpp>

#include "base/error.h"
#include "protocol/frame_header.h"

namespace rpmem::channel {

// The frame being read on one connection: the header bytes first, then a body whose length
// the header decoder has checked against the type's limit. Owned by the connection; one read
// at a time.
struct FrameBuffer {
    protocol::FrameHeaderBytes header_bytes{};
    protocol::FrameHeader header;
    std::vector<std::uint8_t> body;
    std::optional<Error> header_error; // set when the last header was refused
    std::uint32_t request_id = 0;      // the last header's, even a refused one's
};

// Reads one frame from `stream` into `buffer` and calls `handler(boost::system::error_code)`:
// a transport error, or success with either a frame in `buffer` or a header the decoder refused
// in `buffer.header_error` (then nothing more has been read: the stream cannot be trusted to be
// at a frame boundary). The body is allocated only after its length
// passed the header checks. Runs on the stream's executor.
template <typename Stream, typename Handler>
void async_read_frame(Stream& stream, FrameBuffer& buffer, Handler handler) {
    boost::asio::async_read(
        stream, boost::asio::buffer(buffer.header_bytes),
        [&stream, &buffer, handler = std::move(handler)](const boost::system::error_code& ec,
                                                         std::size_t) mutable {
            buffer.header_error.reset();
            if (ec) {
                handler(ec);
                return;
            }
            auto decoded = protocol::decode_frame_header(buffer.header_bytes);
            buffer.request_id = decoded.id;
            auto& header = decoded.result;
            if (!header) {
                buffer.header_error.emplace(std::move(header.error()));
                handler(ec);
                return;
            }
            buffer.header = *header;
            buffer.body.resize(header->body_length);
            boost::asio::async_read(
                stream, boost::asio::buffer(buffer.body),
                [handler = std::move(handler)](const boost::system::error_code& body_ec,
                                               std::size_t) mutable { handler(body_ec); });
        });
}

} // namespace rpmem::channel
