// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>

namespace rpmem::channel {

// The frames waiting to be written on one connection, written one at a time and in order (a
// TLS stream allows one write in flight). A frame stays queued until its write completes,
// since Asio uses the buffer until then. Used by both ends of the channel from the stream's
// executor; not thread-safe.
class FrameWriter {
public:
    std::size_t queued() const noexcept { return frames_.size(); }
    bool writing() const noexcept { return writing_; }

    // Queues `frame` and starts writing unless a write is in flight. After each write, with
    // its frame already dropped, `after(error_code)` says whether to go on with the next queued
    // frame (false: the connection is closing or failed). `after` must keep this writer and the
    // stream alive (e.g. hold a shared_from_this), and is called once per frame written.
    template <typename Stream, typename After>
    void send(Stream& stream, std::vector<std::uint8_t> frame, After after) {
        frames_.push_back(std::move(frame));
        if (!writing_)
            write_next(stream, std::move(after));
    }

private:
    template <typename Stream, typename After>
    void write_next(Stream& stream, After after) {
        writing_ = true;
        boost::asio::async_write(stream, boost::asio::buffer(frames_.front()),
                                 [this, &stream, after = std::move(after)](
                                     const boost::system::error_code& ec, std::size_t) mutable {
                                     writing_ = false;
                                     frames_.pop_front();
                                     if (after(ec) && !ec && !frames_.empty())
                                         write_next(stream, std::move(after));
                                 });
    }

    std::deque<std::vector<std::uint8_t>> frames_; // front is being written
    bool writing_ = false;
};

} // namespace rpmem::channel
