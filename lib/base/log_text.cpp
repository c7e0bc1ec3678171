// SPDX-License-Identifier: BSD-3-Clause
#include "base/log_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace rpmem {

std::string escape_for_log(std::string_view text, std::size_t max_bytes) {
    std::string_view shown = text.substr(0, std::min(text.size(), max_bytes));
    std::string escaped;
    escaped.reserve(shown.size() + 16);
    for (char c : shown) {
        auto byte = static_cast<unsigned char>(c);
        switch (c) {
        case '\n':
            escaped += "\\n";
            continue;
        case '\r':
            escaped += "\\r";
            continue;
        case '\t':
            escaped += "\\t";
            continue;
        case '\\':
            escaped += "\\\\";
            continue;
        default:
            break;
        }
        if (byte < 0x20 || byte >= 0x7f)
            escaped += fmt::format("\\x{:02x}", byte);
        else
            escaped += c;
    }
    if (shown.size() < text.size())
        escaped += fmt::format("\u2026({} more bytes)", text.size() - shown.size());
    return escaped;
}

} // namespace rpmem
