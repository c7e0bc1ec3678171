// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rpmem::tools {

// Builds one JSON document in memory, for rpmemctl's --json output. The caller nests
// begin_*/end_* calls correctly; the writer places commas and colons and escapes strings
// (control characters as \u00XX; bytes that are not valid UTF-8 become U+FFFD, so the output is
// always valid JSON). Not thread-safe; owned by the function that prints the document.
class JsonWriter {
public:
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view name);
    JsonWriter& value(std::string_view text);
    JsonWriter& value(const char* text) { return value(std::string_view(text)); }
    JsonWriter& value(std::uint64_t number);
    JsonWriter& value(bool flag);
    JsonWriter& null();

    const std::string& text() const noexcept { return text_; }

    // `text` as a quoted JSON string.
    static std::string quote(std::string_view text);

private:
    void before_value();

    std::string text_;
    // One entry per open object/array: whether it already holds an element.
    std::vector<bool> has_element_;
    bool after_key_ = false;
};

} // namespace rpmem::tools
