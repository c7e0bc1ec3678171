// SPDX-License-Identifier: BSD-3-Clause
#include "base/config_text.h"

#include <cerrno>
#include <charconv>

#include <fmt/format.h>

namespace rpmem {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
        if (x != b[i])
            return false;
    }
    return true;
}

// "2s" for whole seconds, else "2500ms" or "30us": how a limit is shown in messages.
std::string duration_text(std::chrono::microseconds value) {
    if (value.count() % 1000000 == 0)
        return fmt::format("{}s", value.count() / 1000000);
    if (value.count() % 1000 == 0)
        return fmt::format("{}ms", value.count() / 1000);
    return fmt::format("{}us", value.count());
}

} // namespace

std::string_view trim_config_space(std::string_view text) noexcept {
    const char* const kSpace = " \t\r\n\v\f";
    auto first = text.find_first_not_of(kSpace);
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

Result<std::vector<ConfigEntry>> parse_config_text(std::string_view text, std::string_view origin) {
    std::vector<ConfigEntry> entries;
    unsigned number = 0;
    while (!text.empty()) {
        ++number;
        auto newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);

        if (auto comment = line.find('#'); comment != std::string_view::npos)
            line = line.substr(0, comment);
        line = trim_config_space(line);
        if (line.empty())
            continue;
        auto equals = line.find('=');
        std::string_view key =
            equals == std::string_view::npos ? line : trim_config_space(line.substr(0, equals));
        if (equals == std::string_view::npos || key.empty())
            return fail(EINVAL, fmt::format("{}:{}: expected 'key = value', got '{}'", origin,
                                            number, line));
        entries.push_back(ConfigEntry{
            std::string(key), std::string(trim_config_space(line.substr(equals + 1))), number});
    }
    return entries;
}

Result<bool> parse_config_switch(std::string_view value) {
    for (std::string_view on : {"yes", "true", "on", "1"})
        if (equals_ignoring_case(value, on))
            return true;
    for (std::string_view off : {"no", "false", "off", "0"})
        if (equals_ignoring_case(value, off))
            return false;
    return fail(EINVAL,
                fmt::format("expected yes or no (also true/false, on/off, 1/0), got '{}'", value));
}

Result<std::uint64_t> parse_config_number(std::string_view value, std::uint64_t min,
                                          std::uint64_t max) {
    std::uint64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || number < min ||
        number > max)
        return fail(EINVAL, fmt::format("expected a whole number from {} to {}, got '{}'", min, max,
                                        value));
    return number;
}

Result<std::chrono::microseconds> parse_config_duration(std::string_view value,
                                                        std::chrono::microseconds bare_unit,
                                                        std::chrono::microseconds min,
                                                        std::chrono::microseconds max) {
    auto wrong = [&] {
        return fail(EINVAL, fmt::format("expected a duration such as '500ms', '2s' or '1m' "
                                        "(from {} to {}), got '{}'",
                                        duration_text(min), duration_text(max), value));
    };
    std::size_t digits = 0;
    while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9')
        ++digits;
    std::string_view unit = value.substr(digits);
    std::chrono::microseconds scale{0};
    if (unit.empty())
        scale = bare_unit;
    else if (unit == "us")
        scale = std::chrono::microseconds(1);
    else if (unit == "ms")
        scale = std::chrono::milliseconds(1);
    else if (unit == "s")
        scale = std::chrono::seconds(1);
    else if (unit == "m")
        scale = std::chrono::minutes(1);
    if (digits == 0 || scale.count() == 0)
        return wrong();
    std::uint64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + digits, number);
    const auto limit = static_cast<std::uint64_t>(max.count() / scale.count());
    if (ec != std::errc() || end != value.data() + digits || number > limit)
        return wrong();
    std::chrono::microseconds duration(static_cast<std::int64_t>(number) * scale.count());
    if (duration < min)
        return wrong();
    return duration;
}

} // namespace rpmem
