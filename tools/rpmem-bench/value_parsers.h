// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace rpmem::bench {

// "4096", "4K", "64k", "1M", "2G" (binary multiples) -> bytes; nullopt when malformed.
std::optional<std::size_t> parse_size(std::string_view text);

// A comma-separated list of sizes ("8,64,4K,1M"); nullopt when any element is malformed or the
// list is empty.
std::optional<std::vector<std::size_t>> parse_size_list(std::string_view text);

// A comma-separated list of positive counts ("1,2,4").
std::optional<std::vector<std::size_t>> parse_count_list(std::string_view text);

// A comma-separated list of words ("apm,commit").
std::vector<std::string_view> split_list(std::string_view text);

// Seconds as a decimal number ("0.5", "3").
std::optional<double> parse_seconds(std::string_view text);

// A comma-separated list of fractions in (0, 1] ("0.01,0.1,1").
std::optional<std::vector<double>> parse_fraction_list(std::string_view text);

} // namespace rpmem::bench
