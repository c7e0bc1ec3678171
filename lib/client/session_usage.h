// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"

namespace rpmem::client {

// What calls carried: a lane's (Replica counts per lane) or a session's, summed.
struct UsageCounters {
    std::uint64_t persists = 0;
    std::uint64_t deep_persists = 0;
    std::uint64_t flushes = 0;
    std::uint64_t drains = 0;
    std::uint64_t reads = 0;
    std::uint64_t bytes = 0;
    std::uint64_t posted_by_sibling = 0; // persists a sibling's call had posted (fan-out)

    UsageCounters& operator+=(const UsageCounters& other) noexcept;
    friend bool operator==(const UsageCounters&, const UsageCounters&) = default;
};

// What one replica's session carried, from open to close: Replica::usage(), and the record
// librpmem appends to RPMEM_USAGE_FILE when a replica closes. Tools and tests read these
// records (read_usage_records), never log text.
struct SessionUsage : UsageCounters {
    std::string target;   // "host:port" as the application named it
    std::string pool_set; // the remote pool set's name
    unsigned lanes = 0;
    // Asynchronous replication only (all 0 otherwise): the lag each acknowledgement ended (the
    // age of its message's oldest record), as bucket upper bounds, and the high-water marks.
    bool asynchronous = false;
    std::uint64_t lag_p50_us = 0;
    std::uint64_t lag_p99_us = 0;
    std::uint64_t max_lag_us = 0;
    std::uint64_t max_lag_bytes = 0;

    friend bool operator==(const SessionUsage&, const SessionUsage&) = default;
};

// One record as a line of JSON (no newline).
std::string usage_record(const SessionUsage& usage);
// Appends the record and a newline to `file` with one write(2) (O_APPEND), so the records of
// replicas closing in several threads or processes do not interleave.
Result<void> append_usage_record(const std::filesystem::path& file, const SessionUsage& usage);
// Every record of `file`, in order; EINVAL naming the file and line for one that is not a
// usage record.
Result<std::vector<SessionUsage>> read_usage_records(const std::filesystem::path& file);

} // namespace rpmem::client
