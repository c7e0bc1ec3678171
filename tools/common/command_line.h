// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

namespace rpmem::tools {

// Exit statuses shared by the subcommands of rpmemctl and rpmem-bench.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1; // the operation failed or what it checked is invalid
inline constexpr int kExitUsage = 2;   // the command line itself is wrong

// Where a subcommand writes (results to `out`, diagnostics to `err`) and the exit status its
// run left. Subcommands never call exit().
struct CommandOutput {
    std::ostream& out;
    std::ostream& err;
    int status = kExitOk;
};

// Adds the subcommand `name` to `app`, with a fresh Options for CLI11 to fill; once the command
// line names it and parses, `run(options, out, err)` runs and its return is the exit status.
// `summary` is its line in the program's help; `details` and `footer` close its own help.
// Returns the subcommand (for its options) and the Options (owned by the subcommand's callback).
template <typename Options>
std::pair<CLI::App*, Options*>
add_command(CLI::App& app, std::string name, std::string summary, const std::string& details,
            const std::string& footer, CommandOutput& output,
            int (*run)(const Options&, std::ostream&, std::ostream&)) {
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand(std::move(name), std::move(summary));
    command->footer(footer.empty() ? details : details + "\n\n" + footer);
    command->callback(
        [options, run, &output] { output.status = run(*options, output.out, output.err); });
    return {command, options.get()};
}

// Makes `app` the top level of a program with subcommands: exactly one required, each with
// its own --help; `footer` goes below the top-level help.
void configure_program(CLI::App& app, const std::string& footer);

// Parses the command line with `app`, whose subcommand callbacks run the work. Help goes to
// `output.out` (exit 0); a usage error goes to `output.err` as "PROGRAM COMMAND: what is wrong"
// with a pointer to --help (exit 2); otherwise the status the subcommand left.
int run_command_line(CLI::App& app, int argc, const char* const* argv, CommandOutput& output);

// A CLI11 transform for byte counts in PMDK's size syntax ("4096", "64K", "1M", "2G"; see
// poolset::parse_size): the option then holds the number of bytes.
CLI::Validator byte_size();

} // namespace rpmem::tools
