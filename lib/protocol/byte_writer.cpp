// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/byte_writer.h"

#include <cerrno>

#include <fmt/format.h>

#include "base/little_endian.h"

namespace rpmem::protocol {

void ByteWriter::u8(std::uint8_t value) {
    if (error_.empty())
        out_.push_back(value);
}

namespace {

template <typename T>
void append_le(std::vector<std::uint8_t>& out, T value) {
    std::uint8_t bytes[sizeof(T)];
    store_le(bytes, value);
    out.insert(out.end(), bytes, bytes + sizeof(T));
}

} // namespace

void ByteWriter::u16(std::uint16_t value) {
    if (error_.empty())
        append_le(out_, value);
}

void ByteWriter::u32(std::uint32_t value) {
    if (error_.empty())
        append_le(out_, value);
}

void ByteWriter::u64(std::uint64_t value) {
    if (error_.empty())
        append_le(out_, value);
}

void ByteWriter::bytes(std::span<const std::uint8_t> value) {
    if (error_.empty())
        out_.insert(out_.end(), value.begin(), value.end());
}

void ByteWriter::string(std::string_view value, std::string_view field, std::size_t max_length) {
    if (!error_.empty())
        return;
    if (value.size() > max_length) {
        error_ =
            fmt::format("{} is {} bytes long, the limit is {}", field, value.size(), max_length);
        return;
    }
    if (value.find('\0') != std::string_view::npos) {
        error_ = fmt::format("{} contains a NUL byte", field);
        return;
    }
    u16(static_cast<std::uint16_t>(value.size()));
    const auto* data = reinterpret_cast<const std::uint8_t*>(value.data());
    bytes({data, value.size()});
}

void ByteWriter::require(bool ok, std::string_view what) {
    if (error_.empty() && !ok)
        error_ = what;
}

Result<void> ByteWriter::finish() const {
    if (!error_.empty())
        return fail(EINVAL, error_, ErrorSource::input);
    return {};
}

} // namespace rpmem::protocol
