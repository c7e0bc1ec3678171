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

void add_loopback_options(CLI::App& command, LoopbackOptions& options, const char* default_size) {
    command.add_option("--provider", options.provider, "tcp (default) or sockets");
    command
        .add_option("--pool-size", options.pool_size,
                    std::string("pool size (default ") + default_size +
                        "; at least 2M, a multiple of 4K)")
        ->transform(size_value())
        ->check(CLI::Validator(
            [](const std::string& text) {
                const std::size_t size = std::stoull(text);
                return size >= (2 << 20) && size % 4096 == 0
                           ? std::string()
                           : std::string("takes at least 2M, a multiple of 4K");
            },
            "SIZE"));
    command.add_option("--pool-dir", options.pool_dir,
                       "where the pool files go, both sides (default /dev/shm)");
    command.add_option("--rpmemd", options.rpmemd,
                       "the daemon (default: this build tree's, else rpmemd from PATH)");
}

} // namespace rpmem::bench
