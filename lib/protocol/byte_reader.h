// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"

namespace rpmem::protocol {

// Reads little-endian integers, raw bytes and length-prefixed strings from a message body. A
// read past the end or a value breaking a limit marks the reader failed with a message naming
// the field and offset; later reads yield zero values, and finish() reports the first failure
// or bytes left over. Nothing is allocated before its length has been checked against both
// the limit and the bytes actually present. One reader per body; not thread-safe.
class ByteReader {
public:
    explicit ByteReader(std::span<const std::uint8_t> bytes)
        : bytes_(bytes) {}

    std::uint8_t u8(std::string_view field);
    std::uint16_t u16(std::string_view field);
    std::uint32_t u32(std::string_view field);
    std::uint64_t u64(std::string_view field);
    // A u8 that must be 0 or 1.
    bool boolean(std::string_view field);
    void bytes(std::span<std::uint8_t> out, std::string_view field);
    // A u16 length (at most `max_length`) and that many bytes, none of them NUL.
    std::string string(std::string_view field, std::size_t max_length);
    // Fails with "`field`: `what`" unless `ok`; for checks on decoded values.
    void require(bool ok, std::string_view field, std::string_view what);

    bool failed() const noexcept { return !error_.empty(); }
    // The first failure, or an error if bytes are left over; EPROTO, source protocol, native
    // code Status::bad_message.
    Result<void> finish() const;

private:
    bool take(std::size_t count, std::string_view field);
    void set_error(std::string message);

    std::span<const std::uint8_t> bytes_;
    std::size_t offset_ = 0;
    std::string error_;
};

} // namespace rpmem::protocol
