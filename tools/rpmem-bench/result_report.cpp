// SPDX-License-Identifier: BSD-3-Clause
#include "result_report.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "command.h"
#include "json_text.h"
#include "result_plot.h"

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

// A figure with `decimals` digits after the point, as the CSV prints it.
double rounded(double value, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(value * scale) / scale;
}

} // namespace

void Report::write_json(std::ostream& out) const {
    tools::Json context_json = tools::Json::object();
    for (const auto& [key, value] : context)
        context_json[key] = value;
    tools::Json results = tools::Json::array();
    for (const ResultRow& row : rows) {
        results.push_back({
            {"operation", row.operation},
            {"size", row.size},
            {"lanes", row.lanes},
            {"wait", row.wait},
            {"iterations", row.latency.count},
            {"min_us", rounded(row.latency.min_us, 2)},
            {"p50_us", rounded(row.latency.p50_us, 2)},
            {"p99_us", rounded(row.latency.p99_us, 2)},
            {"max_us", rounded(row.latency.max_us, 2)},
            {"mean_us", rounded(row.latency.mean_us, 2)},
            {"seconds", rounded(row.seconds, 3)},
            {"mb_per_s", rounded(row.mb_per_s, 1)},
            {"ops_per_s", rounded(row.ops_per_s, 0)},
        });
        if (row.client_cpu_us_per_persist >= 0) {
            results.back()["client_cpu_us_per_persist"] = rounded(row.client_cpu_us_per_persist, 2);
            results.back()["daemon_cpu_us_per_persist"] = rounded(row.daemon_cpu_us_per_persist, 2);
        }
    }
    const tools::Json document = {
        {"benchmark", benchmark}, {"context", std::move(context_json)}, {"results", results}};
    out << document.dump(2, ' ', false, tools::Json::error_handler_t::replace) << "\n";
}

void Report::write_csv(std::ostream& out) const {
    fmt::print(out, "# benchmark: {}\n", benchmark);
    for (const auto& [key, value] : context)
        fmt::print(out, "# {}: {}\n", key, value);
    fmt::print(out,
               "operation,size,lanes,wait,iterations,min_us,p50_us,p99_us,max_us,mean_us,"
               "seconds,mb_per_s,ops_per_s,client_cpu_us_per_persist,daemon_cpu_us_per_persist\n");
    const auto cpu = [](double us) { return us >= 0 ? fmt::format("{:.2f}", us) : std::string(); };
    for (const ResultRow& row : rows)
        fmt::print(out,
                   "{},{},{},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.3f},{:.1f},{:.0f},{},{}\n",
                   row.operation, row.size, row.lanes, row.wait, row.latency.count,
                   row.latency.min_us, row.latency.p50_us, row.latency.p99_us, row.latency.max_us,
                   row.latency.mean_us, row.seconds, row.mb_per_s, row.ops_per_s,
                   cpu(row.client_cpu_us_per_persist), cpu(row.daemon_cpu_us_per_persist));
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

int write_report(const Report& report, const OutputOptions& options, std::string_view command,
                 std::ostream& out, std::ostream& err) {
    const int written = write_report(report, options.csv, options.output, command, out, err);
    if (written != kExitOk || options.plot.empty())
        return written;
    return plot_report(report, options.plot, command, err);
}

} // namespace rpmem::bench
