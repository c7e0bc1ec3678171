// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace rpmem {

// The `key = value` format that rpmemd.conf and librpmem's client.conf share, and the value
// spellings both accept. One parser, so that a file means the same to both sides: `#` starts a
// comment anywhere on a line, blank lines are ignored, whitespace around key and value is
// dropped. Pure functions; the callers read the files and apply the entries.

struct ConfigEntry {
    std::string key;
    std::string value;
    unsigned line = 0; // 1-based, for messages naming `origin:line`
};

// The entries of `text` in order. A line with text but no '=' (or with an empty key) is an
// EINVAL error naming `origin` and the line.
Result<std::vector<ConfigEntry>> parse_config_text(std::string_view text, std::string_view origin);

// Switches: yes/no, true/false, on/off, 1/0 (any letter case). PMDK's rpmemd took yes/no and
// its librpmem 1/0; both files take all of them.
Result<bool> parse_config_switch(std::string_view value);

// A whole decimal number in [min, max].
Result<std::uint64_t> parse_config_number(std::string_view value, std::uint64_t min,
                                          std::uint64_t max);

// A duration with an optional unit: "250ms", "2s", "1m", "10us"; a bare number is in
// `bare_unit`. At least `min`, at most `max`.
Result<std::chrono::microseconds> parse_config_duration(std::string_view value,
                                                        std::chrono::microseconds bare_unit,
                                                        std::chrono::microseconds min,
                                                        std::chrono::microseconds max);

// `text` without leading and trailing white space.
std::string_view trim_config_space(std::string_view text) noexcept;

} // namespace rpmem
