// SPDX-License-Identifier: BSD-3-Clause
#include "option_scan.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "command.h"

namespace rpmem::bench {

ScanResult scan_options(
    std::span<const std::string_view> args, std::string_view command, std::ostream& err,
    const std::function<OptionResult(std::string_view key, std::string_view value)>& apply) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view key = args[i];
        if (key == "--help" || key == "-h")
            return ScanResult::help;
        std::optional<std::string_view> value;
        if (const std::size_t equals = key.find('=');
            key.starts_with("--") && equals != std::string_view::npos) {
            value = key.substr(equals + 1);
            key = key.substr(0, equals);
        } else if (i + 1 < args.size()) {
            value = args[++i];
        }
        if (!value) {
            fmt::print(err, "{}: {} needs a value\n", command, key);
            return ScanResult::wrong;
        }
        switch (apply(key, *value)) {
        case OptionResult::applied:
            break;
        case OptionResult::unknown:
            fmt::print(err, "{}: unknown option {}\n", command, key);
            return ScanResult::wrong;
        case OptionResult::bad_value:
            fmt::print(err, "{}: bad value for {}: '{}'\n", command, key, *value);
            return ScanResult::wrong;
        }
    }
    return ScanResult::ok;
}

int usage_exit(ScanResult result, std::string_view usage, std::ostream& out, std::ostream& err) {
    if (result == ScanResult::help) {
        out << usage;
        return kExitOk;
    }
    err << "\n" << usage;
    return kExitUsage;
}

std::optional<OptionResult> apply_output_option(std::string_view key, std::string_view value,
                                                OutputOptions& options) {
    if (key == "--format") {
        if (value != "json" && value != "csv")
            return OptionResult::bad_value;
        options.csv = value == "csv";
        return OptionResult::applied;
    }
    if (key == "--output") {
        options.output = std::string(value);
        return OptionResult::applied;
    }
    return std::nullopt;
}

} // namespace rpmem::bench
