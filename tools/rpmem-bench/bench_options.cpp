// SPDX-License-Identifier: BSD-3-Clause
#include "bench_options.h"

#include <charconv>
#include <limits>
#include <string_view>

#include "result_plot.h"

namespace rpmem::bench {

void add_output_options(CLI::App& command, OutputOptions& options) {
    command
        .add_option_function<std::string>(
            "--format", [&options](const std::string& format) { options.csv = format == "csv"; },
            "json (default) or csv")
        ->check(CLI::IsMember({"json", "csv"}));
    command.add_option("--output", options.output,
                       "write the results there instead of standard output");
    command
        .add_option("--plot", options.plot,
                    "also draw the results into FILE.svg or FILE.png (rpmem-bench-plot)")
        ->check(CLI::Validator(
            [](const std::string& path) {
                return is_plot_path(path) ? std::string()
                                          : std::string("expected a FILE.svg or FILE.png");
            },
            "FILE.svg|png"));
}

CLI::Validator size_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            std::size_t value = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc() || end == text.data())
                return "'" + text + "' is not a size (digits, then K, M or G)";
            const std::string_view suffix(
                end, static_cast<std::size_t>(text.data() + text.size() - end));
            int shift = 0;
            if (suffix == "K" || suffix == "k")
                shift = 10;
            else if (suffix == "M" || suffix == "m")
                shift = 20;
            else if (suffix == "G" || suffix == "g")
                shift = 30;
            else if (!suffix.empty())
                return "'" + text + "' has an unknown suffix (K, M or G)";
            if (value > (std::numeric_limits<std::size_t>::max() >> shift))
                return "'" + text + "' is too large";
            text = std::to_string(value << shift);
            return {};
        },
        "SIZE", "size");
}

} // namespace rpmem::bench
