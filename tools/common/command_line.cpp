// SPDX-License-Identifier: BSD-3-Clause
#include "command_line.h"

#include "poolset/parser.h"

namespace rpmem::tools {

void configure_program(CLI::App& app, const std::string& footer) {
    app.require_subcommand(1, 1);
    app.footer(footer);
    // Subcommands keep their own help flag; none accepts options of its parent.
    app.fallthrough(false);
}

int run_command_line(CLI::App& app, int argc, const char* const* argv, CommandOutput& output) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        output.out << app.help();
        return kExitOk;
    } catch (const CLI::CallForAllHelp&) {
        output.out << app.help("", CLI::AppFormatMode::All);
        return kExitOk;
    } catch (const CLI::ParseError& error) {
        // The innermost subcommand the command line reached names the usage that was wrong.
        std::string where = app.get_name();
        const CLI::App* at = &app;
        while (!at->get_subcommands().empty()) {
            at = at->get_subcommands().front();
            where += " " + at->get_name();
        }
        // A word CLI11 took for no subcommand at all is a command that does not exist.
        const std::vector<std::string> unknown = app.remaining();
        const std::string what = at == &app && !unknown.empty()
                                     ? "unknown command '" + unknown.front() + "'"
                                     : std::string(error.what());
        output.err << where << ": " << what << "\n"
                   << "Run '" << where << " --help' for the arguments.\n";
        return kExitUsage;
    }
    return output.status;
}

CLI::Validator byte_size() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            auto bytes = poolset::parse_size(text);
            if (!bytes)
                return bytes.error().message();
            text = std::to_string(*bytes);
            return {};
        },
        "SIZE", "byte_size");
}

} // namespace rpmem::tools
