// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_options.h"
#include "latency_summary.h"

namespace rpmem::bench {

// One measured cell: an operation at one size on some lanes.
struct ResultRow {
    std::string operation; // "apm", "gpspm", "commit", "batch"
    std::size_t size = 0;  // bytes per write (a batch moves 16 of them)
    std::size_t lanes = 0;
    std::string wait; // "spin" or "adaptive:<us>us"
    LatencySummary latency;
    double seconds = 0; // wall time of the measured part
    double mb_per_s = 0;
    double ops_per_s = 0;
    // CPU per persist (user + system), where the row measured it (rpmem-bench pmemobj: the
    // row's CPU over librpmem's count of its persists); negative: not measured. "client": this
    // program; "daemon": every rpmemd of the row with its workers.
    double client_cpu_us_per_persist = -1;
    double daemon_cpu_us_per_persist = -1;

    // Fills latency, seconds and the rates from the samples (nanoseconds, sorted in place) of
    // `seconds` of wall time, each operation moving `bytes_per_operation`.
    void summarise(std::vector<std::uint64_t>& samples_ns, double seconds,
                   std::size_t bytes_per_operation);
};

// A whole run: what was measured where, then the rows. Written as one JSON document or as
// CSV (a header line, then one line per row; the context goes into leading '#' lines).
struct Report {
    std::string benchmark;
    // Free-form context, e.g. {"provider", "tcp"}, {"cpus", "2"}.
    std::vector<std::pair<std::string, std::string>> context;
    std::vector<ResultRow> rows;

    void write_json(std::ostream& out) const;
    void write_csv(std::ostream& out) const;
};

// Writes `report` as CSV or JSON to the file `output` names, or to `out` when it is empty;
// returns the command's exit status (failures are reported on `err` as "COMMAND: ...").
int write_report(const Report& report, bool csv, const std::string& output,
                 std::string_view command, std::ostream& out, std::ostream& err);

// As above, as the subcommand's --format and --output say, then the figure --plot asks for.
int write_report(const Report& report, const OutputOptions& options, std::string_view command,
                 std::ostream& out, std::ostream& err);

} // namespace rpmem::bench
