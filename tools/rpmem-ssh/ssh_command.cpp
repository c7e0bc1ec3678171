// SPDX-License-Identifier: BSD-3-Clause
#include "ssh_command.h"

#include <cerrno>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace rpmem::tools {

namespace {

std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    std::istringstream in{std::string(text)};
    std::string word;
    while (in >> word)
        out.push_back(word);
    return out;
}

} // namespace

Result<RemoveCall> parse_ssh_command(std::span<const std::string_view> args) {
    std::size_t i = 0;
    std::optional<std::string> port;
    for (; i < args.size() && args[i].starts_with("-"); ++i) {
        std::string_view option = args[i];
        if (option == "-p") {
            if (i + 1 >= args.size())
                return fail(EINVAL, "option -p needs a port");
            port = std::string(args[++i]);
        } else if (option == "-T" || option == "-4" || option == "-6" || option.starts_with("-o")) {
            // ssh's own settings: nothing to do for a TLS connection.
        } else {
            return fail(EINVAL, fmt::format("unknown ssh option '{}'", option));
        }
    }
    if (i >= args.size())
        return fail(EINVAL, "expected [user@]host after the options");
    std::string destination(args[i++]);
    if (port)
        destination = (destination.find(':') != std::string::npos &&
                               destination.find('[') == std::string::npos
                           ? "[" + destination + "]"
                           : destination) +
                      ":" + *port;
    auto target = parse_target(destination);
    if (!target)
        return fail(std::move(target.error()).add_context("destination"));

    std::string command;
    for (; i < args.size(); ++i) {
        if (!command.empty())
            command += ' ';
        command += args[i];
    }
    std::vector<std::string> tokens = words(command);
    RemoveCall call{.target = *target};
    bool removing = false;
    for (std::size_t t = 1; t < tokens.size(); ++t) {
        const std::string& token = tokens[t];
        if (token == "--remove" || token == "-r") {
            if (t + 1 >= tokens.size())
                return fail(EINVAL, fmt::format("remote command '{}': {} needs a pool set", command,
                                                token));
            removing = true;
            call.pool_set = tokens[++t];
        } else if (token.starts_with("--remove=")) {
            removing = true;
            call.pool_set = token.substr(9);
        } else if (token == "--force" || token == "-f") {
            call.force = true;
        } else if (token == "--pool-set" || token == "-s") {
            call.remove_set_file = true;
        } else {
            return fail(EINVAL, fmt::format("remote command '{}': unexpected '{}' (only "
                                            "'rpmemd --remove SET [--force] [--pool-set]' is "
                                            "relayed)",
                                            command, token));
        }
    }
    if (tokens.empty() || !removing || call.pool_set.empty())
        return fail(EINVAL, fmt::format("remote command '{}' is not 'rpmemd --remove SET "
                                        "[--force] [--pool-set]'",
                                        command));
    return call;
}

} // namespace rpmem::tools
