// SPDX-License-Identifier: BSD-3-Clause
#include "client/session_usage.h"

#include <cerrno>
#include <fstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "base/unique_fd.h"

namespace rpmem::client {

namespace {

nlohmann::json to_json(const SessionUsage& usage) {
    return {
        {"target", usage.target},
        {"pool_set", usage.pool_set},
        {"lanes", usage.lanes},
        {"persists", usage.persists},
        {"deep_persists", usage.deep_persists},
        {"flushes", usage.flushes},
        {"drains", usage.drains},
        {"reads", usage.reads},
        {"bytes", usage.bytes},
        {"posted_by_sibling", usage.posted_by_sibling},
        {"asynchronous", usage.asynchronous},
        {"lag_p50_us", usage.lag_p50_us},
        {"lag_p99_us", usage.lag_p99_us},
        {"max_lag_us", usage.max_lag_us},
        {"max_lag_bytes", usage.max_lag_bytes},
    };
}

SessionUsage from_json(const nlohmann::json& record) {
    SessionUsage usage;
    record.at("target").get_to(usage.target);
    record.at("pool_set").get_to(usage.pool_set);
    record.at("lanes").get_to(usage.lanes);
    record.at("persists").get_to(usage.persists);
    record.at("deep_persists").get_to(usage.deep_persists);
    record.at("flushes").get_to(usage.flushes);
    record.at("drains").get_to(usage.drains);
    record.at("reads").get_to(usage.reads);
    record.at("bytes").get_to(usage.bytes);
    record.at("posted_by_sibling").get_to(usage.posted_by_sibling);
    // Records from before asynchronous replication have none of these.
    usage.asynchronous = record.value("asynchronous", false);
    usage.lag_p50_us = record.value("lag_p50_us", std::uint64_t{0});
    usage.lag_p99_us = record.value("lag_p99_us", std::uint64_t{0});
    usage.max_lag_us = record.value("max_lag_us", std::uint64_t{0});
    usage.max_lag_bytes = record.value("max_lag_bytes", std::uint64_t{0});
    return usage;
}

} // namespace

UsageCounters& UsageCounters::operator+=(const UsageCounters& other) noexcept {
    persists += other.persists;
    deep_persists += other.deep_persists;
    flushes += other.flushes;
    drains += other.drains;
    reads += other.reads;
    bytes += other.bytes;
    posted_by_sibling += other.posted_by_sibling;
    return *this;
}

std::string usage_record(const SessionUsage& usage) {
    // Names are the application's bytes: replaced, not refused, where they are not UTF-8.
    return to_json(usage).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<void> append_usage_record(const std::filesystem::path& file, const SessionUsage& usage) {
    const std::string line = usage_record(usage) + "\n";
    UniqueFd out(::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (!out.valid())
        return fail(Error::from_errno(errno, "opening the usage file " + file.string()));
    const ssize_t written = ::write(out.get(), line.data(), line.size());
    if (written != static_cast<ssize_t>(line.size()))
        return fail(Error::from_errno(written < 0 ? errno : EIO,
                                      "writing the usage file " + file.string()));
    return {};
}

Result<std::vector<SessionUsage>> read_usage_records(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in)
        return fail(ENOENT, "no usage file " + file.string());
    std::vector<SessionUsage> records;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        try {
            records.push_back(from_json(nlohmann::json::parse(line)));
        } catch (const nlohmann::json::exception& e) {
            return fail(EINVAL, fmt::format("{} line {}: not a usage record: {}", file.string(),
                                            number, e.what()));
        }
    }
    return records;
}

} // namespace rpmem::client
