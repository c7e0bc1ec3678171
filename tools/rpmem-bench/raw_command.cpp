// SPDX-License-Identifier: BSD-3-Clause
// `rpmem-bench raw`: the fabric round trips the persistence methods are made of, measured on
// loopback with the target in a thread of this process (pinned to another core when there is
// one): write + 8-byte read (APM), write + send + reply (GPSPM), write with commit-complete,
// and 16 writes + one read; for each size and lane count, p50/p99 latency and MB/s.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <latch>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "bench_options.h"
#include "command.h"
#include "cpu_affinity.h"
#include "fabric/deadline.h"
#include "fabric/waiter.h"
#include "latency_summary.h"
#include "raw_client.h"
#include "raw_target.h"
#include "result_report.h"

namespace rpmem::bench {

namespace {

using fabric::Clock;
using fabric::WaitPolicy;

enum class WaitMode {
    automatic, // spin while every thread has a core of its own, adaptive otherwise
    spin,
    adaptive,
};

struct RawOptions {
    std::string provider = "tcp";
    std::string address = "127.0.0.1";
    std::vector<RawOperation> operations{RawOperation::apm, RawOperation::gpspm,
                                         RawOperation::commit, RawOperation::batch};
    std::vector<std::size_t> sizes{8, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576};
    std::vector<std::size_t> lanes{1, 2};
    std::size_t iterations = 10000;
    std::optional<std::size_t> warmup;
    double duration = 2.0; // seconds per cell at most
    WaitMode wait = WaitMode::automatic;
    std::size_t spin_us = 20;
    OutputOptions output;
};

// The measurement of one cell, per lane thread.
struct LaneRun {
    std::vector<std::uint64_t> samples_ns;
    Clock::time_point start;
    Clock::time_point end;
    std::optional<Error> failure;
};

struct Cell {
    RawOperation operation;
    std::size_t size;
    std::size_t lanes;
};

class RawBenchmark {
public:
    RawBenchmark(const RawOptions& options, std::vector<int> cpus)
        : options_(options)
        , cpus_(std::move(cpus)) {}

    Result<Report> run(std::ostream& err);

private:
    Result<ResultRow> measure(const Cell& cell);
    void drive_lane(const Cell& cell, std::size_t lane, std::latch& ready, LaneRun& run);
    // Client lanes take every CPU but the target's when there are several.
    int client_cpu(std::size_t lane) const {
        if (cpus_.size() < 2)
            return -1;
        return cpus_[lane % (cpus_.size() - 1)];
    }

    const RawOptions& options_;
    std::vector<int> cpus_;
    std::unique_ptr<RawTarget> target_;
    std::unique_ptr<RawClient> client_;
};

Result<Report> RawBenchmark::run(std::ostream& err) {
    const std::size_t max_size = *std::max_element(options_.sizes.begin(), options_.sizes.end());
    const std::size_t max_lanes = *std::max_element(options_.lanes.begin(), options_.lanes.end());
    const std::size_t region_size = std::max<std::size_t>(kBatchWrites * max_size, 4096);

    RawTargetConfig config;
    config.provider = options_.provider;
    config.address = options_.address;
    config.region_size = region_size;
    config.max_lanes = max_lanes;
    config.cpu = cpus_.size() >= 2 ? cpus_.back() : -1;
    auto target = RawTarget::start(config);
    if (!target)
        return fail(std::move(target.error()));
    target_ = std::move(*target);
    auto client = RawClient::connect(options_.provider, options_.address, target_->service(),
                                     max_lanes, region_size, target_->region());
    if (!client)
        return fail(std::move(client.error()));
    client_ = std::move(*client);

    const fabric::Capabilities& caps = client_->capabilities();
    Report report;
    report.benchmark = "raw";
    report.context = {
        {"provider", caps.provider},
        {"capabilities", caps.describe()},
        {"cpus", std::to_string(cpus_.size())},
        {"pinned", cpus_.size() >= 2 ? "target on the last CPU, lanes on the others" : "no"},
        {"target", "thread, shared CQ, no flush"},
    };
    for (const RawOperation operation : options_.operations) {
        if (operation == RawOperation::commit && !caps.commit_complete) {
            fmt::print(err,
                       "rpmem-bench raw: {} does not honour FI_COMMIT_COMPLETE: commit "
                       "skipped\n",
                       caps.provider);
            continue;
        }
        for (const std::size_t lanes : options_.lanes) {
            for (const std::size_t size : options_.sizes) {
                if (size > caps.max_msg_size)
                    continue;
                auto row = measure(Cell{operation, size, lanes});
                if (!row)
                    return fail(std::move(row.error()));
                report.rows.push_back(std::move(*row));
            }
        }
    }
    return report;
}

void RawBenchmark::drive_lane(const Cell& cell, std::size_t lane, std::latch& ready, LaneRun& run) {
    if (const int cpu = client_cpu(lane); cpu >= 0)
        pin_current_thread(cpu);
    const std::size_t warmup =
        options_.warmup.value_or(std::min<std::size_t>(options_.iterations / 10, 1000));
    run.samples_ns.reserve(options_.iterations);
    ready.arrive_and_wait();
    for (std::size_t i = 0; i < warmup; ++i) {
        if (auto done = client_->run_once(cell.operation, lane, cell.size); !done) {
            run.failure = std::move(done.error());
            return;
        }
    }
    const auto limit = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(options_.duration));
    run.start = Clock::now();
    Clock::time_point before = run.start;
    for (std::size_t i = 0; i < options_.iterations; ++i) {
        if (auto done = client_->run_once(cell.operation, lane, cell.size); !done) {
            run.failure = std::move(done.error());
            return;
        }
        const Clock::time_point after = Clock::now();
        run.samples_ns.push_back(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(after - before).count()));
        before = after;
        if (after - run.start >= limit)
            break;
    }
    run.end = before;
}

Result<ResultRow> RawBenchmark::measure(const Cell& cell) {
    const bool spin = options_.wait == WaitMode::spin ||
                      (options_.wait == WaitMode::automatic && cell.lanes + 1 <= cpus_.size());
    const auto budget = std::chrono::microseconds(options_.spin_us);
    target_->set_spin(spin ? std::chrono::nanoseconds(-1) : budget);
    client_->set_wait_policy(
        WaitPolicy{spin ? WaitPolicy::kSpinForever : budget, std::chrono::milliseconds(20)});

    std::vector<LaneRun> runs(cell.lanes);
    std::latch ready(static_cast<std::ptrdiff_t>(cell.lanes));
    std::vector<std::thread> threads;
    for (std::size_t lane = 0; lane < cell.lanes; ++lane)
        threads.emplace_back([&, lane] { drive_lane(cell, lane, ready, runs[lane]); });
    for (std::thread& thread : threads)
        thread.join();

    const std::string what = fmt::format("{} of {} bytes on {} lane(s)", to_string(cell.operation),
                                         cell.size, cell.lanes);
    std::vector<std::uint64_t> samples;
    Clock::time_point start = Clock::time_point::max();
    Clock::time_point end = Clock::time_point::min();
    for (LaneRun& run : runs) {
        if (run.failure)
            return fail(std::move(run.failure->add_context(what)));
        samples.insert(samples.end(), run.samples_ns.begin(), run.samples_ns.end());
        start = std::min(start, run.start);
        end = std::max(end, run.end);
    }
    if (auto failure = target_->failure())
        return fail(std::move(failure->add_context(what + ": target")));
    // Every iteration wrote the same source bytes to the same place: they must be there.
    const std::size_t written = payload_bytes(cell.operation, cell.size);
    if (std::memcmp(target_->memory(), client_->source(), written) != 0)
        return fail(EIO, what + ": the target's memory does not hold the bytes written",
                    ErrorSource::system, 0);

    ResultRow row;
    row.operation = std::string(to_string(cell.operation));
    row.size = cell.size;
    row.lanes = cell.lanes;
    row.wait = spin ? std::string("spin") : fmt::format("adaptive:{}us", options_.spin_us);
    row.summarise(samples, std::chrono::duration<double>(end - start).count(), written);
    return row;
}

int run_raw(const RawOptions& options, std::ostream& out, std::ostream& err) {
    RawBenchmark benchmark(options, usable_cpus());
    auto report = benchmark.run(err);
    if (!report) {
        fmt::print(err, "rpmem-bench raw: {}\n", report.error().message());
        return kExitFailure;
    }
    return write_report(*report, options.output, "rpmem-bench raw", out, err);
}

} // namespace

void add_raw_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "raw", "fabric round trips on loopback: write+read, write+send+reply, commit, batch",
        "Measures the fabric round trips the persistence methods are made of, on loopback, with\n"
        "the target in a thread of this process. One row per operation, lane count and size.",
        "", output, &run_raw);
    command->add_option("--provider", options->provider,
                        "tcp (default), sockets, verbs, or any FI_EP_MSG + RMA provider");
    command->add_option("--address", options->address,
                        "address to listen on and connect to (default 127.0.0.1)");
    std::map<std::string, RawOperation> operations;
    for (RawOperation operation :
         {RawOperation::apm, RawOperation::gpspm, RawOperation::commit, RawOperation::batch})
        operations.emplace(std::string(to_string(operation)), operation);
    command
        ->add_option("--ops", options->operations,
                     "apm,gpspm,commit,batch (default: all). apm: write + 8-byte read, wait for "
                     "the read; gpspm: write + 32-byte send, wait for the 16-byte reply; commit: "
                     "write with FI_COMMIT_COMPLETE (where the provider honours it); batch: 16 "
                     "writes + one 8-byte read (MB/s counts all 16)")
        ->delimiter(',')
        ->transform(CLI::CheckedTransformer(operations))
        ->type_name("OP[,OP...]");
    command
        ->add_option("--sizes", options->sizes,
                     "write sizes, K/M suffixes (default 8,64,256,1K,4K,16K,64K,256K,1M)")
        ->delimiter(',')
        ->transform(size_value());
    command
        ->add_option("--lanes", options->lanes,
                     "endpoints driven in parallel, one thread each (default 1,2)")
        ->delimiter(',')
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--iterations", options->iterations,
                     "measured iterations per lane and cell, at most (default 10000)")
        ->check(CLI::PositiveNumber);
    // Zero is meaningful for these two: no warmup, or block at once.
    command->add_option_function<std::size_t>(
        "--warmup", [options = options](std::size_t count) { options->warmup = count; },
        "unmeasured iterations first (default iterations/10, at most 1000)");
    command
        ->add_option("--duration", options->duration,
                     "stop a cell's measurement after this many seconds (default 2)")
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--wait", options->wait,
                     "auto (default): busy-poll when every thread has a core, else adaptive; "
                     "spin; adaptive")
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, WaitMode>{{"auto", WaitMode::automatic},
                                            {"spin", WaitMode::spin},
                                            {"adaptive", WaitMode::adaptive}}))
        ->type_name("MODE");
    command->add_option("--spin-us", options->spin_us,
                        "spin budget of adaptive waiting, microseconds (default 20)");
    add_output_options(*command, options->output);
}

} // namespace rpmem::bench
