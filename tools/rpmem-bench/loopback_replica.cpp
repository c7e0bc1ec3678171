// SPDX-License-Identifier: BSD-3-Clause
#include "loopback_replica.h"

#include <fstream>

#include <fmt/format.h>

#include "poolset/parser.h"

namespace rpmem::bench {

Result<poolset::PoolMapping> map_initiator_pool(const std::filesystem::path& part,
                                                std::size_t size) {
    auto set =
        poolset::parse(fmt::format("PMEMPOOLSET\n{} {}\n", size, part.string()), "local.set");
    if (!set)
        return fail(std::move(set.error()));
    return poolset::PoolMapping::create(*set);
}

Result<std::unique_ptr<RpmemdProcess>> start_rpmemd(const std::filesystem::path& binary,
                                                    const std::filesystem::path& directory,
                                                    Report& report) {
    auto rpmemd = RpmemdProcess::start(binary, directory, {});
    if (!rpmemd)
        return rpmemd;
    report.context.emplace_back("rpmemd",
                                fmt::format("{} on 127.0.0.1:{}, log {}", binary.string(),
                                            (*rpmemd)->port(), (*rpmemd)->log_file().string()));
    return rpmemd;
}

Result<void> write_target_set(const RpmemdProcess& rpmemd, const std::string& name,
                              std::size_t size, const std::filesystem::path& part) {
    std::ofstream out(rpmemd.poolset_dir() / name);
    out << fmt::format("PMEMPOOLSET\nOPTION NOHDRS\n{} {}\n", size, part.string());
    if (!out)
        return fail(EIO, fmt::format("writing the target's pool set {}", name));
    return {};
}

client::Settings loopback_settings(const RpmemdProcess& rpmemd, const std::string& provider,
                                   const std::filesystem::path& log_file) {
    client::Settings settings;
    const channel::CredentialFiles& tls = rpmemd.credentials();
    settings.tls_ca = tls.ca_certificate.string();
    settings.tls_cert = tls.client_certificate.string();
    settings.tls_key = tls.client_key.string();
    settings.provider = provider;
    settings.enable_sockets = provider == "sockets";
    settings.log_level = "info";
    settings.log_file = log_file.string();
    return settings;
}

} // namespace rpmem::bench
