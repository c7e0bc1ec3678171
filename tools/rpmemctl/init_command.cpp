// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl init DIR [--server-name NAME]... [--client-name NAME] [--force]`: the first setup in
// one command. Makes a CA, a server certificate and a client certificate in DIR (ca.crt,
// server.crt, server.key, client.crt, client.key; keys mode 0600) and prints the rpmemd config
// lines and the client environment that use them.
#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <pwd.h>
#include <unistd.h>

#include "channel/credentials.h"
#include "command.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kUsage =
    "usage: rpmemctl init DIR [--server-name NAME]... [--client-name NAME] [--force]\n"
    "\n"
    "Makes the TLS material of a deployment in DIR: a CA (ca.crt), rpmemd's certificate and\n"
    "key (server.crt, server.key) and a client certificate and key (client.crt, client.key);\n"
    "private keys are mode 0600. Prints the rpmemd config lines and the client environment.\n"
    "\n"
    "  --server-name NAME  a host name or IP address clients dial rpmemd at (repeatable;\n"
    "                      default: this host's name, localhost, 127.0.0.1 and ::1)\n"
    "  --client-name NAME  the client identity, the CN of client.crt (default: your user name)\n"
    "  --force             replace existing files\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

struct InitOptions {
    std::string directory;
    std::vector<std::string> server_names;
    std::string client_name;
    bool force = false;
};

std::vector<std::string> default_server_names() {
    std::vector<std::string> names;
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0')
        names.emplace_back(host);
    for (const char* name : {"localhost", "127.0.0.1", "::1"})
        if (std::find(names.begin(), names.end(), name) == names.end())
            names.emplace_back(name);
    return names;
}

std::string default_client_name() {
    if (const passwd* user = ::getpwuid(::geteuid()); user != nullptr && user->pw_name != nullptr)
        return user->pw_name;
    return "rpmem-client";
}

// Parses the arguments after "init"; nothing on a usage error (already reported on `err`).
std::optional<InitOptions> parse(std::span<const std::string_view> args, std::ostream& err) {
    InitOptions options;
    bool have_directory = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        auto value_of = [&](std::string_view option) -> std::optional<std::string> {
            if (arg.starts_with(std::string(option) + "="))
                return std::string(arg.substr(option.size() + 1));
            if (arg == option) {
                if (i + 1 < args.size())
                    return std::string(args[++i]);
                err << "rpmemctl init: " << option << " needs a value\n";
            }
            return std::nullopt;
        };
        auto is = [&](std::string_view option) {
            return arg == option || arg.starts_with(std::string(option) + "=");
        };
        if (is("--server-name")) {
            auto value = value_of("--server-name");
            if (!value)
                return std::nullopt;
            options.server_names.push_back(*value);
        } else if (is("--client-name")) {
            auto value = value_of("--client-name");
            if (!value)
                return std::nullopt;
            options.client_name = *value;
        } else if (arg == "--force") {
            options.force = true;
        } else if (arg.starts_with("-")) {
            err << "rpmemctl init: unknown option '" << arg << "'\n";
            return std::nullopt;
        } else if (!have_directory) {
            options.directory = std::string(arg);
            have_directory = true;
        } else {
            err << "rpmemctl init: unexpected argument '" << arg << "'\n";
            return std::nullopt;
        }
    }
    if (!have_directory) {
        err << "rpmemctl init: expected a directory\n";
        return std::nullopt;
    }
    return options;
}

void print_setup(const channel::CredentialFiles& files, const InitOptions& options,
                 std::ostream& out) {
    out << "Wrote the TLS material of an rpmem deployment to "
        << files.ca_certificate.parent_path().string() << ":\n"
        << "  ca.crt                   the CA both ends trust\n"
        << "  server.crt, server.key   rpmemd's certificate, for:";
    for (const auto& name : options.server_names)
        out << " " << name;
    out << "\n"
        << "  client.crt, client.key   the client certificate of identity '" << options.client_name
        << "'\n"
        << "Private keys are mode 0600. Copy ca.crt and the client files to the client hosts.\n"
        << "\n"
        << "# rpmemd config (/etc/rpmemd/rpmemd.conf, or rpmemd --config FILE):\n"
        << "tls-ca = " << files.ca_certificate.string() << "\n"
        << "tls-cert = " << files.server_certificate.string() << "\n"
        << "tls-key = " << files.server_key.string() << "\n"
        << "# optional: admit only this identity (default: any the CA signed)\n"
        << "#allow-client = " << options.client_name << "\n"
        << "\n"
        << "# client environment (librpmem, rpmemctl):\n"
        << "export RPMEM_TLS_CA=" << files.ca_certificate.string() << "\n"
        << "export RPMEM_TLS_CERT=" << files.client_certificate.string() << "\n"
        << "export RPMEM_TLS_KEY=" << files.client_key.string() << "\n";
}

} // namespace

int run_init_command(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    return run_parsed(args, kUsage, out, err, parse, [&](InitOptions options) {
        if (options.server_names.empty())
            options.server_names = default_server_names();
        if (options.client_name.empty())
            options.client_name = default_client_name();

        std::error_code ec;
        std::filesystem::path directory = std::filesystem::absolute(options.directory, ec);
        if (ec) {
            err << "rpmemctl init: " << options.directory << ": " << ec.message() << "\n";
            return kExitFailure;
        }
        channel::CredentialOptions credentials;
        credentials.server_names = options.server_names;
        credentials.client_identity = options.client_name;
        credentials.overwrite = options.force;
        auto files = channel::write_credentials(directory, credentials);
        if (!files) {
            err << "rpmemctl init: " << files.error().message() << "\n";
            if (files.error().errno_value() == EEXIST)
                err << "(use --force to replace the files)\n";
            return kExitFailure;
        }
        print_setup(*files, options, out);
        return kExitOk;
    });
}

} // namespace rpmem::tools
