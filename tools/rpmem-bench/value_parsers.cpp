// SPDX-License-Identifier: BSD-3-Clause
#include "value_parsers.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace rpmem::bench {

namespace {

// A positive, finite decimal number, the whole of `text`.
std::optional<double> parse_positive_decimal(std::string_view text) {
    if (text.empty())
        return std::nullopt;
    try {
        std::size_t used = 0;
        const double value = std::stod(std::string(text), &used);
        if (used != text.size() || !std::isfinite(value) || value <= 0)
            return std::nullopt;
        return value;
    } catch (...) {
        return std::nullopt;
    }
}

} // namespace

std::optional<std::size_t> parse_size(std::string_view text) {
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data())
        return std::nullopt;
    std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
    int shift = 0;
    if (suffix == "K" || suffix == "k")
        shift = 10;
    else if (suffix == "M" || suffix == "m")
        shift = 20;
    else if (suffix == "G" || suffix == "g")
        shift = 30;
    else if (!suffix.empty())
        return std::nullopt;
    if (value > (std::numeric_limits<std::size_t>::max() >> shift))
        return std::nullopt;
    return value << shift;
}

std::vector<std::string_view> split_list(std::string_view text) {
    std::vector<std::string_view> items;
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        items.push_back(text.substr(0, comma));
        if (comma == std::string_view::npos)
            break;
        text.remove_prefix(comma + 1);
    }
    return items;
}

std::optional<std::vector<std::size_t>> parse_size_list(std::string_view text) {
    std::vector<std::size_t> sizes;
    for (const std::string_view item : split_list(text)) {
        const auto size = parse_size(item);
        if (!size || *size == 0)
            return std::nullopt;
        sizes.push_back(*size);
    }
    if (sizes.empty())
        return std::nullopt;
    return sizes;
}

std::optional<std::vector<std::size_t>> parse_count_list(std::string_view text) {
    std::vector<std::size_t> counts;
    for (const std::string_view item : split_list(text)) {
        std::size_t count = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), count);
        if (ec != std::errc() || end != item.data() + item.size() || count == 0)
            return std::nullopt;
        counts.push_back(count);
    }
    if (counts.empty())
        return std::nullopt;
    return counts;
}

std::optional<double> parse_seconds(std::string_view text) {
    return parse_positive_decimal(text);
}

std::optional<std::vector<double>> parse_fraction_list(std::string_view text) {
    std::vector<double> fractions;
    for (const std::string_view item : split_list(text)) {
        const auto fraction = parse_positive_decimal(item);
        if (!fraction || *fraction > 1)
            return std::nullopt;
        fractions.push_back(*fraction);
    }
    if (fractions.empty())
        return std::nullopt;
    return fractions;
}

} // namespace rpmem::bench
