// SPDX-License-Identifier: BSD-3-Clause
#include "result_report.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "command.h"

namespace rpmem::bench {

void ResultRow::summarise(std::vector<std::uint64_t>& samples_ns, double wall_seconds,
                          std::size_t bytes_per_operation) {
    seconds = wall_seconds;
    latency = LatencySummary::of(samples_ns);
    if (seconds > 0) {
        ops_per_s = static_cast<double>(latency.count) / seconds;
        mb_per_s = ops_per_s * static_cast<double>(bytes_per_operation) / 1e6;
    }
}

namespace {

std::string quote(const std::string& text) {
    std::string quoted = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            quoted += '\\';
            quoted += c;
        } else if (byte < 0x20) {
            quoted += fmt::format("\\u{:04x}", byte);
        } else {
            quoted += c;
        }
    }
    return quoted + "\"";
}

} // namespace

void Report::write_json(std::ostream& out) const {
    fmt::print(out, "{{\n  \"benchmark\": {},\n  \"context\": {{", quote(benchmark));
    for (std::size_t i = 0; i < context.size(); ++i)
        fmt::print(out, "{}\n    {}: {}", i == 0 ? "" : ",", quote(context[i].first),
                   quote(context[i].second));
    fmt::print(out, "\n  }},\n  \"results\": [");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ResultRow& row = rows[i];
        fmt::print(out,
                   "{}\n    {{\"operation\": {}, \"size\": {}, \"lanes\": {}, \"wait\": {}, "
                   "\"iterations\": {}, \"min_us\": {:.2f}, \"p50_us\": {:.2f}, "
                   "\"p99_us\": {:.2f}, \"max_us\": {:.2f}, \"mean_us\": {:.2f}, "
                   "\"seconds\": {:.3f}, \"mb_per_s\": {:.1f}, \"ops_per_s\": {:.0f}}}",
                   i == 0 ? "" : ",", quote(row.operation), row.size, row.lanes, quote(row.wait),
                   row.latency.count, row.latency.min_us, row.latency.p50_us, row.latency.p99_us,
                   row.latency.max_us, row.latency.mean_us, row.seconds, row.mb_per_s,
                   row.ops_per_s);
    }
    fmt::print(out, "\n  ]\n}}\n");
}

void Report::write_csv(std::ostream& out) const {
    fmt::print(out, "# benchmark: {}\n", benchmark);
    for (const auto& [key, value] : context)
        fmt::print(out, "# {}: {}\n", key, value);
    fmt::print(out, "operation,size,lanes,wait,iterations,min_us,p50_us,p99_us,max_us,mean_us,"
                    "seconds,mb_per_s,ops_per_s\n");
    for (const ResultRow& row : rows)
        fmt::print(out, "{},{},{},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.3f},{:.1f},{:.0f}\n",
                   row.operation, row.size, row.lanes, row.wait, row.latency.count,
                   row.latency.min_us, row.latency.p50_us, row.latency.p99_us, row.latency.max_us,
                   row.latency.mean_us, row.seconds, row.mb_per_s, row.ops_per_s);
}

int write_report(const Report& report, bool csv, const std::string& output,
                 std::string_view command, std::ostream& out, std::ostream& err) {
    std::ofstream file;
    if (!output.empty()) {
        file.open(output);
        if (!file) {
            fmt::print(err, "{}: cannot write {}: {}\n", command, output, std::strerror(errno));
            return kExitFailure;
        }
    }
    std::ostream& destination = output.empty() ? out : file;
    if (csv)
        report.write_csv(destination);
    else
        report.write_json(destination);
    return destination ? kExitOk : kExitFailure;
}

} // namespace rpmem::bench
