// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/byte_reader.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "base/little_endian.h"
#include "protocol/status.h"

namespace rpmem::protocol {

bool ByteReader::take(std::size_t count, std::string_view field) {
    if (failed())
        return false;
    if (bytes_.size() - offset_ < count) {
        set_error(fmt::format("{}: truncated, needs {} bytes at offset {}, {} left", field, count,
                              offset_, bytes_.size() - offset_));
        return false;
    }
    return true;
}

void ByteReader::set_error(std::string message) {
    if (error_.empty())
        error_ = std::move(message);
}

std::uint8_t ByteReader::u8(std::string_view field) {
    if (!take(1, field))
        return 0;
    return bytes_[offset_++];
}

std::uint16_t ByteReader::u16(std::string_view field) {
    if (!take(2, field))
        return 0;
    auto value = load_le<std::uint16_t>(bytes_.data() + offset_);
    offset_ += 2;
    return value;
}

std::uint32_t ByteReader::u32(std::string_view field) {
    if (!take(4, field))
        return 0;
    auto value = load_le<std::uint32_t>(bytes_.data() + offset_);
    offset_ += 4;
    return value;
}

std::uint64_t ByteReader::u64(std::string_view field) {
    if (!take(8, field))
        return 0;
    auto value = load_le<std::uint64_t>(bytes_.data() + offset_);
    offset_ += 8;
    return value;
}

bool ByteReader::boolean(std::string_view field) {
    std::size_t at = offset_;
    std::uint8_t value = u8(field);
    if (value > 1)
        set_error(fmt::format("{}: {} at offset {} is not a boolean", field, value, at));
    return value == 1;
}

void ByteReader::bytes(std::span<std::uint8_t> out, std::string_view field) {
    if (!take(out.size(), field)) {
        std::fill(out.begin(), out.end(), std::uint8_t{0});
        return;
    }
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset_), out.size(), out.begin());
    offset_ += out.size();
}

std::string ByteReader::string(std::string_view field, std::size_t max_length) {
    std::size_t at = offset_;
    std::uint16_t length = u16(field);
    if (failed())
        return {};
    if (length > max_length) {
        set_error(fmt::format("{}: length {} at offset {} exceeds the limit of {}", field, length,
                              at, max_length));
        return {};
    }
    if (!take(length, field))
        return {};
    const auto* begin = reinterpret_cast<const char*>(bytes_.data() + offset_);
    std::string_view value(begin, length);
    if (value.find('\0') != std::string_view::npos) {
        set_error(fmt::format("{}: string at offset {} contains a NUL byte", field, at));
        return {};
    }
    offset_ += length;
    return std::string(value);
}

void ByteReader::require(bool ok, std::string_view field, std::string_view what) {
    if (!ok && !failed())
        set_error(fmt::format("{}: {}", field, what));
}

Result<void> ByteReader::finish() const {
    std::string message = error_;
    if (message.empty() && offset_ != bytes_.size())
        message = fmt::format("{} unexpected bytes after the last field at offset {}",
                              bytes_.size() - offset_, offset_);
    if (!message.empty())
        return fail(EPROTO, std::move(message), ErrorSource::protocol,
                    static_cast<int>(Status::bad_message));
    return {};
}

} // namespace rpmem::protocol
