// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace rpmem::protocol {

// Appends little-endian integers, raw bytes and length-prefixed strings to a byte vector. The
// first limit violation is remembered (later writes are ignored) and reported by finish(), so
// encoders read as a plain list of fields. One writer per message; not thread-safe.
class ByteWriter {
public:
    explicit ByteWriter(std::vector<std::uint8_t>& out)
        : out_(out) {}

    void u8(std::uint8_t value);
    void u16(std::uint16_t value);
    void u32(std::uint32_t value);
    void u64(std::uint64_t value);
    void boolean(bool value) { u8(value ? 1 : 0); }
    void bytes(std::span<const std::uint8_t> value);
    // A u16 length and the bytes, no terminator. `field` names it in the error when the string
    // is longer than `max_length` or contains a NUL byte.
    void string(std::string_view value, std::string_view field, std::size_t max_length);
    // Fails with `what` unless `ok`; for limits on counts.
    void require(bool ok, std::string_view what);

    Result<void> finish() const;

private:
    std::vector<std::uint8_t>& out_;
    std::string error_;
};

} // namespace rpmem::protocol
