// SPDX-License-Identifier: BSD-3-Clause
// `rpmem-bench persist`: the latency of replicated persists through rpmem's own data path,
// against the raw fabric round trip of the same shape measured in the same run.
//
// Both run in this process over loopback, the target pinned to the last CPU and the client to
// the first, both busy-polling. The baseline is `raw`'s target and client: write + send +
// reply (gpspm), write with FI_COMMIT_COMPLETE (commit), write + 8-byte read (apm), nothing
// flushed. rpmem's side is rpmemd's FabricTarget serving a real pool file (put it on tmpfs or
// set PMEM_IS_PMEM_FORCE=1, else msync dominates) and the client's LaneSet: strict persists
// (data inline, copied with 8-byte stores and flushed by the target), and relaxed persists by
// each method.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include "base/page_buffer.h"
#include "bench_options.h"
#include "client/lane_set.h"
#include "command.h"
#include "cpu_affinity.h"
#include "latency_summary.h"
#include "poolset/parser.h"
#include "poolset/pool_mapping.h"
#include "process_cpu.h"
#include "raw_baseline.h"
#include "raw_target.h"
#include "result_report.h"
#include "rpmemd/worker/fabric_target.h"
#include "sampling.h"
#include "work_directory.h"

namespace rpmem::bench {

namespace {

namespace fs = std::filesystem;

struct PersistOptions {
    std::string provider = "tcp";
    std::vector<std::size_t> sizes{64, 4096, 65536, 1048576};
    SampleLimits limits;
    std::string pool_dir = "/dev/shm";
    OutputOptions output;
};

// rpmem's data path: a pool file served by FabricTarget, reached through a LaneSet.
class PersistBench {
public:
    PersistBench(const PersistOptions& options, std::vector<int> cpus)
        : options_(options)
        , cpus_(std::move(cpus)) {}

    Result<void> run(Report& report) {
        const std::size_t max_size =
            *std::max_element(options_.sizes.begin(), options_.sizes.end());
        // Room for the header page and a window of distinct ranges per size.
        pool_size_ = std::max<std::size_t>(64 << 20, 4096 + 16 * max_size);
        pool_size_ = (pool_size_ + (2 << 20) - 1) / (2 << 20) * (2 << 20);

        auto work = WorkDirectory::make(options_.pool_dir, WorkDirectory::Cleanup::always);
        if (!work)
            return fail(std::move(work.error()));
        work_.emplace(std::move(*work));
        dir_ = work_->path();
        auto set = poolset::parse(
            fmt::format("PMEMPOOLSET\n{} {}\n", pool_size_, (dir_ / "pool.part0").string()),
            "rpmem-bench.set");
        if (!set)
            return fail(std::move(set.error()));
        auto mapping = poolset::PoolMapping::create(*set);
        if (!mapping)
            return fail(std::move(mapping.error()));
        mapping_.emplace(std::move(*mapping));
        report.context.emplace_back(
            "target pool", fmt::format("{} ({})", (dir_ / "pool.part0").string(),
                                       mapping_->is_pmem() ? "persistent memory: CPU flushes"
                                                           : "not persistent memory: msync"));

        auto local = PageBuffer::allocate(pool_size_);
        if (!local)
            return fail(std::move(local.error()).add_context("the local pool"));
        local_ = std::move(*local);
        for (std::size_t i = 0; i < pool_size_; ++i)
            local_.data()[i] = static_cast<std::byte>(i * 131 + 7);

        struct Mode {
            protocol::PersistMethod method;
            bool strict;
            const char* name;
            bool client_default_wait = false; // librpmem's adaptive spin, not busy-polling
        };
        for (Mode mode : {Mode{protocol::PersistMethod::gpspm, true, "strict"},
                          Mode{protocol::PersistMethod::gpspm, true, "strict-adaptive", true},
                          Mode{protocol::PersistMethod::commit, false, "relaxed-commit"},
                          Mode{protocol::PersistMethod::gpspm, false, "relaxed-gpspm"},
                          Mode{protocol::PersistMethod::apm, false, "relaxed-apm"}}) {
            if (auto measured = measure_mode(mode.method, mode.strict, mode.name,
                                             mode.client_default_wait, report);
                !measured)
                return measured;
        }
        // Everything persisted (16 ranges of the largest size, past the header) must be in the
        // target's pool.
        if (std::memcmp(mapping_->data() + 4096, local_.data() + 4096, 16 * max_size) != 0)
            return fail(EIO, "the target's pool does not hold the persisted bytes");
        return {};
    }

private:
    Result<void> measure_mode(protocol::PersistMethod method, bool strict, const char* name,
                              bool client_default_wait, Report& report) {
        daemon::DataPlaneRequest request;
        request.provider = protocol::provider_preference_from_name(options_.provider)
                               .value_or(protocol::ProviderPreference::any);
        request.bind_host = "127.0.0.1";
        request.pool = &*mapping_;
        request.protected_prefix = 4096;
        request.lanes = 1;
        std::random_device random;
        for (auto& byte : request.token)
            byte = static_cast<std::uint8_t>(random());
        request.session_name = "rpmem-bench";
        request.responder_spin = std::chrono::nanoseconds::max();
        request.responder_cpu = cpus_.size() >= 2 ? cpus_.back() : -1;
        auto target = daemon::start_fabric_target(request);
        if (!target)
            return fail(std::move(target.error()));

        const protocol::DataPath path =
            (*target)->info().data_path(method, mapping_->size(), request.token);
        client::Settings settings;
        // Never block (the client has a core of its own), unless the row measures librpmem's
        // default: fabric::WaitController below RPMEM_SPIN_US.
        if (!client_default_wait)
            settings.spin = std::chrono::hours(1);
        if (cpus_.size() >= 2)
            pin_current_thread(cpus_.front());
        auto lanes = client::LaneSet::connect(path, "127.0.0.1", {local_.data(), pool_size_},
                                              settings, 1, nullptr);
        if (!lanes)
            return fail(std::move(lanes.error()));
        persist::InitiatorLane& lane = (*lanes)->lane(0);

        for (std::size_t size : options_.sizes) {
            // Sixteen distinct ranges in turn, past the header.
            const double thread_before = thread_cpu_seconds();
            const double process_before = process_cpu_seconds();
            auto row = sample_latency(name, size, options_.limits, [&](std::size_t i) {
                const std::size_t offset = 4096 + (i % 16) * size;
                return lane.persist(offset, size, !strict);
            });
            if (!row)
                return fail(std::move(row.error()));
            // CPU per persist (user + system): the client's thread, and this whole process
            // (client and the in-process target, which busy-polls).
            const double persists =
                static_cast<double>(std::max<std::size_t>(row->latency.count, 1));
            report.context.emplace_back(
                fmt::format("cpu per persist {} {} B", name, size),
                fmt::format("client thread {:.1f} us, client + target {:.1f} us (p50 {:.1f} us)",
                            (thread_cpu_seconds() - thread_before) / persists * 1e6,
                            (process_cpu_seconds() - process_before) / persists * 1e6,
                            row->latency.p50_us));
            if (client_default_wait)
                row->wait = "librpmem default (adaptive spin)";
            report.rows.push_back(std::move(*row));
        }
        return {};
    }

    const PersistOptions& options_;
    std::vector<int> cpus_;
    std::optional<WorkDirectory> work_; // first: removed after everything in it closed
    fs::path dir_;
    std::size_t pool_size_ = 0;
    std::optional<poolset::PoolMapping> mapping_;
    PageBuffer local_;
};

// "strict 64: 1.08x raw-gpspm" lines: each rpmem row against its fabric counterpart, and a
// strict persist also against the cheapest durable write there is, one FI_COMMIT_COMPLETE
// write (the mark of issue 25: 1.3x at most).
void add_ratios(Report& report) {
    const std::multimap<std::string, std::string> baselines_of = {
        {"strict", "raw-gpspm"},          {"strict", "raw-commit"},
        {"strict-adaptive", "raw-gpspm"}, {"strict-adaptive", "raw-commit"},
        {"relaxed-gpspm", "raw-gpspm"},   {"relaxed-commit", "raw-commit"},
        {"relaxed-apm", "raw-apm"},
    };
    for (const ResultRow& row : report.rows) {
        auto [first, last] = baselines_of.equal_range(row.operation);
        for (auto name = first; name != last; ++name)
            for (const ResultRow& baseline : report.rows)
                if (baseline.operation == name->second && baseline.size == row.size &&
                    baseline.latency.p50_us > 0)
                    report.context.emplace_back(
                        fmt::format("p50 {} {} B vs {}", row.operation, row.size,
                                    baseline.operation),
                        fmt::format("{:.1f} us = {:.2f}x {} ({:.1f} us)", row.latency.p50_us,
                                    row.latency.p50_us / baseline.latency.p50_us,
                                    baseline.operation, baseline.latency.p50_us));
    }
}

int run_persist(const PersistOptions& options, std::ostream& out, std::ostream& err) {
    const std::vector<int> cpus = usable_cpus();
    Report report;
    report.benchmark = "persist";
    report.context = {
        {"provider", options.provider},
        {"cpus", std::to_string(cpus.size())},
        {"pinned", cpus.size() >= 2 ? "target on the last CPU, client on the first" : "no"},
        {"wait", "both sides busy-poll"},
    };
    constexpr RawOperation kShapes[] = {RawOperation::gpspm, RawOperation::commit,
                                        RawOperation::apm};
    if (auto raw = measure_raw_baseline(options.provider, kShapes, options.sizes, options.limits,
                                        cpus, report);
        !raw) {
        fmt::print(err, "rpmem-bench persist: raw baseline: {}\n", raw.error().message());
        return kExitFailure;
    }
    {
        PersistBench bench(options, cpus);
        if (auto measured = bench.run(report); !measured) {
            fmt::print(err, "rpmem-bench persist: {}\n", measured.error().message());
            return kExitFailure;
        }
    }
    add_ratios(report);

    return write_report(report, options.output, "rpmem-bench persist", out, err);
}

} // namespace

void add_persist_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "persist", "rpmem's replicated persists against the raw round trip, same run",
        "Replicated persist latency through rpmem's data path (rpmemd's FabricTarget serving a\n"
        "real pool file, the client's lanes) against the raw fabric round trip of the same\n"
        "shape, both measured in this run on loopback. Rows: raw-gpspm, raw-commit, raw-apm (the\n"
        "fabric), then strict (a plain rpmem_persist), strict-adaptive (the same with librpmem's\n"
        "default wait: spin while it pays, else block), relaxed-commit, relaxed-gpspm,\n"
        "relaxed-apm. The context lists each rpmem figure as a ratio to its raw counterpart, and\n"
        "the CPU (user + system) per persist of the client's thread and of the whole process.",
        kPoolFooter, output, &run_persist);
    command->add_option("--provider", options->provider, "tcp (default) or sockets");
    command->add_option("--sizes", options->sizes, "persist sizes (default 64,4K,64K,1M)")
        ->delimiter(',')
        ->transform(size_value());
    command
        ->add_option("--iterations", options->limits.iterations,
                     "measured persists per row, at most (default 20000)")
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--duration", options->limits.duration,
                     "stop a row after this many seconds (default 2)")
        ->check(CLI::PositiveNumber);
    command->add_option("--pool-dir", options->pool_dir,
                        "where the target's pool file goes (default /dev/shm)");
    add_output_options(*command, options->output);
}

} // namespace rpmem::bench
