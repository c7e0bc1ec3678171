// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <ostream>
#include <span>
#include <string_view>

namespace rpmem::tools {

// Exit statuses shared by every rpmemctl subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1; // the thing checked is invalid, or the operation failed
inline constexpr int kExitUsage = 2;   // the command line itself is wrong

// True when the first argument asks for help (`--help` or `-h`); `usage` has then gone to `out`
// and the subcommand returns kExitOk.
inline bool printed_help(std::span<const std::string_view> args, std::string_view usage,
                         std::ostream& out) {
    if (args.empty() || (args[0] != "--help" && args[0] != "-h"))
        return false;
    out << usage;
    return true;
}

// How a subcommand with an option parser starts: help (kExitOk); else `parse(args, err)`, whose
// failure (already explained on `err`) prints `usage` on `err` (kExitUsage); else `run` with
// the parsed options, whose exit status it returns.
template <typename Parse, typename Run>
int run_parsed(std::span<const std::string_view> args, std::string_view usage, std::ostream& out,
               std::ostream& err, Parse parse, Run run) {
    if (printed_help(args, usage, out))
        return kExitOk;
    auto options = parse(args, err);
    if (!options) {
        err << usage;
        return kExitUsage;
    }
    return run(*options);
}

// One rpmemctl subcommand: its name, a one-line summary for the top-level help, and the
// function that runs it with the arguments after its name. Subcommands write results to `out`
// and diagnostics to `err`, and return an exit status; they never call exit().
struct Command {
    std::string_view name;
    std::string_view summary;
    int (*run)(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
};

// `rpmemctl poolset ...` (poolset_command.cpp).
int run_poolset_command(std::span<const std::string_view> args, std::ostream& out,
                        std::ostream& err);

// `rpmemctl init ...` (init_command.cpp).
int run_init_command(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

// `rpmemctl status ...` (status_command.cpp).
int run_status_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);

// `rpmemctl events ...` (events_command.cpp).
int run_events_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);

// `rpmemctl create ...` (create_command.cpp).
int run_create_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);

// `rpmemctl remove ...` (remove_command.cpp).
int run_remove_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);

// `rpmemctl info ...` (info_command.cpp).
int run_info_command(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

// `rpmemctl verify ...` (verify_command.cpp).
int run_verify_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);

// `rpmemctl promote|demote|rejoin|role ...` (failover_commands.cpp).
int run_promote_command(std::span<const std::string_view> args, std::ostream& out,
                        std::ostream& err);
int run_demote_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);
int run_rejoin_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err);
int run_role_command(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

} // namespace rpmem::tools
