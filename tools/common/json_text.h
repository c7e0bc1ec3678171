// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rpmem::tools {

// The tools' JSON documents keep their fields in the order they were written (a reader of the
// text sees "file" or "target" first), which nlohmann::json's sorted objects would not.
using Json = nlohmann::ordered_json;

// `document` as one line of text; bytes that are not UTF-8 become U+FFFD, so the output is
// always valid JSON whatever names a client or a file chose.
std::string json_text(const Json& document);

} // namespace rpmem::tools
