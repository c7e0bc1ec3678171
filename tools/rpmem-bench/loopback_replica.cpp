// SPDX-License-Identifier: BSD-3-Clause
#include "loopback_replica.h"

#include <fstream>

#include <fmt/format.h>

#include "mount_info.h"
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

Result<std::unique_ptr<LoopbackReplica>> LoopbackReplica::make(const Options& options) {
    auto work = WorkDirectory::make(options.pool_dir, WorkDirectory::Cleanup::after_success);
    if (!work)
        return fail(std::move(work.error()));
    return std::unique_ptr<LoopbackReplica>(new LoopbackReplica(options, std::move(*work)));
}

Result<void> LoopbackReplica::open(Report& report) {
    const std::filesystem::path& dir = directory();
    auto mapping = map_initiator_pool(dir / "local.part0", options_.pool_size);
    if (!mapping)
        return fail(std::move(mapping.error()));
    local_.emplace(std::move(*mapping));
    pool_ = {reinterpret_cast<std::byte*>(local_->data()), local_->size()};

    auto rpmemd = start_rpmemd(options_.rpmemd, dir / "rpmemd", report);
    if (!rpmemd)
        return fail(std::move(rpmemd.error()));
    rpmemd_ = std::move(*rpmemd);
    if (auto written = write_target_set(*rpmemd_, options_.set_name, pool_.size(), target_part());
        !written)
        return written;

    client::Settings settings =
        loopback_settings(*rpmemd_, options_.provider, dir / "librpmem.log");
    settings.on_replica_failure = options_.on_failure;
    const Target where{.user = "", .host = "127.0.0.1", .port = rpmemd_->port()};
    lanes_ = options_.lanes;
    auto replica =
        client::Replica::create(settings, where, options_.set_name, pool_, lanes_, nullptr);
    if (!replica)
        return fail(std::move(replica.error()));
    replica_ = std::move(*replica);
    report.context.emplace_back(
        "pool", fmt::format("{} MiB, local {} ({}), target {}", pool_.size() >> 20,
                            (dir / "local.part0").string(),
                            local_->is_pmem() ? "persistent memory" : "not persistent memory",
                            target_part().string()));
    report.context.emplace_back("pool file system", describe_mount(dir));
    return {};
}

Result<void> LoopbackReplica::close() {
    auto closed = replica_->close();
    replica_.reset();
    if (!closed)
        return closed;
    work_.succeeded();
    return {};
}

} // namespace rpmem::bench
