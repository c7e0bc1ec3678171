// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace rpmem::bench {

// What a subcommand's handler says of one option.
enum class OptionResult {
    applied,
    bad_value,
    unknown,
};

// How the command line of a subcommand turned out.
enum class ScanResult {
    ok,
    help,  // --help or -h: print the usage, exit 0
    wrong, // already reported on `err`: print the usage, exit 2
};

// Walks the `--key value` and `--key=value` pairs of a subcommand's arguments, handing each to
// `apply`; reports a missing value, an unknown key or a bad value on `err` as "COMMAND: ...".
ScanResult scan_options(
    std::span<const std::string_view> args, std::string_view command, std::ostream& err,
    const std::function<OptionResult(std::string_view key, std::string_view value)>& apply);

// For a command line that was not ok: prints the usage (to `out` for help, after the error on
// `err` otherwise) and returns the exit status.
int usage_exit(ScanResult result, std::string_view usage, std::ostream& out, std::ostream& err);

// Where every subcommand writes its report: --format json|csv, --output FILE.
struct OutputOptions {
    bool csv = false;
    std::string output; // empty: standard output
};

// Applies --format or --output; nullopt for any other key.
std::optional<OptionResult> apply_output_option(std::string_view key, std::string_view value,
                                                OutputOptions& options);

} // namespace rpmem::bench
