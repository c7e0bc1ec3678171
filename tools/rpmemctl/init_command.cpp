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

int run_init(const InitOptions& given, std::ostream& out, std::ostream& err) {
    InitOptions options = given;
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
        report_failure(err, "init", files.error());
        if (files.error().errno_value() == EEXIST)
            err << "(use --force to replace the files)\n";
        return kExitFailure;
    }
    print_setup(*files, options, out);
    return kExitOk;
}

} // namespace

void add_init_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "init", "make a CA, server and client certificates",
        "Make the TLS material of a deployment in DIR: a CA (ca.crt), rpmemd's certificate and\n"
        "key (server.crt, server.key) and a client certificate and key (client.crt, client.key);\n"
        "private keys are mode 0600. Prints the rpmemd config lines and the client environment.",
        "Exit status: 0 done, 1 failed, 2 usage error.", output, &run_init);
    command->add_option("DIR", options->directory, "where the files go")->required();
    command
        ->add_option("--server-name", options->server_names,
                     "a host name or IP address clients dial rpmemd at (repeatable; default: "
                     "this host's name, localhost, 127.0.0.1 and ::1)")
        ->allow_extra_args(false);
    command->add_option("--client-name", options->client_name,
                        "the client identity, the CN of client.crt (default: your user name)");
    command->add_flag("--force", options->force, "replace existing files");
}

} // namespace rpmem::tools
