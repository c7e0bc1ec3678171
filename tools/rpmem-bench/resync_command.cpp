// SPDX-License-Identifier: BSD-3-Clause
// `rpmem-bench resync`: what an online resync costs. A pool is replicated by a real rpmemd on
// loopback through the client's Replica with on-replica-failure = continue. Each round kills
// rpmemd with SIGKILL, persists a chosen fraction of the pool (4 KiB extents in a random
// order, spread over the pool) while the replica is degraded, so that only the dirty map
// records them, restarts rpmemd on the same port, and lets the replica's recovery thread
// reconnect and copy the missed extents. The figure is the resync alone: from the new
// session's install (state resyncing) to in_sync, as Replica::last_resync() records it; the
// reconnect and its backoff are reported apart. The mark is the fabric's raw write bandwidth
// (raw's target and client, batches of RMA writes), measured in the same run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include "bench_options.h"
#include "client/extent_digest.h"
#include "client/replica.h"
#include "command.h"
#include "cpu_affinity.h"
#include "loopback_replica.h"
#include "raw_baseline.h"
#include "result_report.h"
#include "rpmemd_process.h"
#include "sampling.h"
#include "work_directory.h"

namespace rpmem::bench {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kExtent = client::DirtyExtents::kExtentSize;
// Raw write sizes: the resync's largest copy (16 extents in one message) and 1 MiB.
constexpr std::size_t kRawSizes[] = {16 * kExtent, 1 << 20};
// How long the benchmark waits for rpmemd to go, for the replica to degrade and to resync.
constexpr auto kPatience = std::chrono::seconds(120);

struct ResyncOptions : LoopbackOptions {
    ResyncOptions() { pool_size = std::size_t{256} << 20; }

    std::vector<double> dirty{0.01, 0.1, 1.0};
    std::size_t repeat = 3;
    unsigned lanes = 16; // asked for; librpmem grants one per core at most by default
    OutputOptions output;
};

// Waits until `done()` holds, polling every millisecond; false after kPatience.
template <typename Condition>
bool wait_until(Condition done) {
    const auto deadline = Clock::now() + kPatience;
    while (!done()) {
        if (Clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

double seconds_between(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
}

// One fraction's rounds.
struct ResyncRounds {
    double fraction = 0;
    std::size_t dirty_bytes = 0;
    std::vector<std::uint64_t> resync_ns;
    std::uint64_t copied_bytes = 0; // over all rounds
    double reconnect_seconds = 0;   // over all rounds
};

class ResyncBench {
public:
    explicit ResyncBench(const ResyncOptions& options)
        : options_(options) {}

    Result<void> run(Report& report, std::vector<ResyncRounds>& results) {
        if (auto started = start(report); !started)
            return started;
        for (const double fraction : options_.dirty) {
            auto rounds = measure(fraction);
            if (!rounds)
                return fail(std::move(rounds.error()));
            results.push_back(std::move(*rounds));
        }
        return bench_->close();
    }

    // Where the files are kept after a failure.
    fs::path directory() const {
        return bench_ ? bench_->directory() : fs::path(options_.pool_dir);
    }
    unsigned lanes() const noexcept { return bench_ ? bench_->lanes() : 0; } // granted

private:
    Result<void> start(Report& report) {
        auto bench =
            LoopbackReplica::make({.pool_dir = options_.pool_dir,
                                   .rpmemd = options_.rpmemd,
                                   .pool_size = options_.pool_size,
                                   .provider = options_.provider,
                                   .set_name = "resync.set",
                                   .lanes = options_.lanes,
                                   .on_failure = client::FailurePolicy::continue_degraded});
        if (!bench)
            return fail(std::move(bench.error()));
        bench_ = std::move(*bench);
        if (auto opened = bench_->open(report); !opened)
            return opened;
        pool_ = bench_->pool();
        replica_ = &bench_->replica();
        rpmemd_ = &bench_->rpmemd();
        report.context.emplace_back(
            "lanes", fmt::format("{} asked for, {} granted", options_.lanes, bench_->lanes()));
        return {};
    }

    Result<ResyncRounds> measure(double fraction) {
        const std::size_t extents = pool_.size() / kExtent;
        const auto wanted = static_cast<std::size_t>(std::llround(fraction * extents));
        const std::size_t count = std::clamp<std::size_t>(wanted, 1, extents);
        ResyncRounds rounds;
        rounds.fraction = fraction;
        rounds.dirty_bytes = count * kExtent;

        std::vector<std::size_t> order(extents);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::mt19937_64 random(0x5e5c + count);
        for (std::size_t round = 0; round < options_.repeat; ++round) {
            // A fresh random choice each round, in random order.
            std::shuffle(order.begin(), order.end(), random);
            const std::span<const std::size_t> chosen(order.data(), count);
            auto measured = measure_round(chosen, ++stamp_, rounds);
            if (!measured)
                return fail(std::move(measured.error().add_context(
                    fmt::format("resync of {} (round {})", fraction, round + 1))));
        }
        return rounds;
    }

    Result<void> measure_round(std::span<const std::size_t> chosen, std::uint64_t stamp,
                               ResyncRounds& rounds) {
        for (const std::size_t extent : chosen)
            fill_extent(extent, stamp);
        const std::uint64_t resyncs_before = replica_->last_resync().completed;

        // The crash: rpmemd and its worker die; the next persist fails and, under continue,
        // degrades the replica (returning 0). Until then the persists still reach the target.
        rpmemd_->kill(SIGKILL);
        const std::size_t probe = chosen.front() * kExtent;
        std::optional<Error> probe_failure;
        if (!wait_until([&] {
                auto persisted = replica_->persist(probe, kExtent, 0, client::PersistMode::strict);
                if (!persisted)
                    probe_failure = std::move(persisted.error());
                return probe_failure || replica_->sync_state() != client::SyncState::in_sync;
            }))
            return fail(ETIMEDOUT, "the replica did not degrade after rpmemd was killed");
        if (probe_failure)
            return fail(std::move(*probe_failure));
        // While degraded a persist only marks its extents.
        for (const std::size_t extent : chosen) {
            if (auto persisted =
                    replica_->persist(extent * kExtent, kExtent, 0, client::PersistMode::strict);
                !persisted)
                return persisted;
        }
        if (replica_->sync_state() != client::SyncState::degraded ||
            replica_->dirty_extents() != chosen.size())
            return fail(EIO, fmt::format("the replica records {} missed extents of the {} written "
                                         "while degraded",
                                         replica_->dirty_extents(), chosen.size()));

        if (auto restarted = rpmemd_->restart(); !restarted)
            return restarted;
        const Clock::time_point listening = Clock::now();
        if (!wait_until([&] { return replica_->last_resync().completed > resyncs_before; }))
            return fail(ETIMEDOUT, "the replica did not come back in sync");
        const client::Replica::ResyncRecord resync = replica_->last_resync();
        rounds.resync_ns.push_back(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(resync.ended - resync.began)
                .count()));
        rounds.copied_bytes += resync.bytes;
        rounds.reconnect_seconds += seconds_between(listening, resync.began);
        if (resync.bytes != chosen.size() * kExtent)
            return fail(EIO, fmt::format("the resync copied {} bytes, {} were missed", resync.bytes,
                                         chosen.size() * kExtent));
        return check_equal();
    }

    // Every 8-byte word of the extent: its offset and the round's stamp.
    void fill_extent(std::size_t extent, std::uint64_t stamp) {
        for (std::size_t offset = extent * kExtent; offset < (extent + 1) * kExtent; offset += 8) {
            const std::uint64_t word = (stamp << 40) ^ offset;
            std::memcpy(pool_.data() + offset, &word, sizeof word);
        }
    }

    // The target's copy equals the local pool, by the digests rpmemd computes of its own data.
    Result<void> check_equal() {
        constexpr std::size_t kDigestExtent = 1 << 20;
        auto remote = replica_->digests(0, pool_.size(), kDigestExtent);
        if (!remote)
            return fail(std::move(remote.error()));
        auto local = client::local_digests(pool_, 0, pool_.size(), kDigestExtent);
        if (!local)
            return fail(std::move(local.error()));
        const auto differing =
            client::differing_ranges(*local, *remote, {0, pool_.size()}, kDigestExtent);
        if (!differing.empty())
            return fail(EIO, fmt::format("after the resync the target's copy differs from the "
                                         "local pool in {} ranges, the first at {}",
                                         differing.size(), differing.front().offset));
        return {};
    }

    const ResyncOptions& options_;
    std::unique_ptr<LoopbackReplica> bench_;
    std::span<std::byte> pool_;          // bench_'s
    client::Replica* replica_ = nullptr; // bench_'s
    RpmemdProcess* rpmemd_ = nullptr;    // bench_'s
    std::uint64_t stamp_ = 0;
};

std::string mib_per_s(double bytes_per_s) {
    return fmt::format("{:.0f} MiB/s", bytes_per_s / (1 << 20));
}

// One row per fraction, and its throughput against each raw write bandwidth in the context.
void add_results(Report& report, const std::vector<ResyncRounds>& results, unsigned lanes) {
    for (const ResyncRounds& rounds : results) {
        ResultRow row;
        row.operation = fmt::format("resync-{}", rounds.fraction);
        row.size = rounds.dirty_bytes;
        row.lanes = lanes;
        row.wait = "librpmem default";
        std::vector<std::uint64_t> samples = rounds.resync_ns;
        const double total =
            static_cast<double>(std::accumulate(samples.begin(), samples.end(), std::uint64_t{0})) /
            1e9;
        row.summarise(samples, total, rounds.dirty_bytes);
        report.rows.push_back(row);

        const double resync_bytes_per_s =
            static_cast<double>(rounds.dirty_bytes) / (row.latency.p50_us / 1e6);
        std::string ratios;
        for (const std::size_t size : kRawSizes) {
            const double raw_us = p50_of(report, "raw-batch", size);
            if (raw_us <= 0)
                continue;
            const double raw_bytes_per_s =
                static_cast<double>(payload_bytes(RawOperation::batch, size)) / (raw_us / 1e6);
            ratios +=
                fmt::format(", {:.2f}x raw write {} KiB ({})", resync_bytes_per_s / raw_bytes_per_s,
                            size >> 10, mib_per_s(raw_bytes_per_s));
        }
        report.context.emplace_back(fmt::format("p50 {}", row.operation),
                                    fmt::format("{:.2f} MiB in {:.1f} ms = {}{}",
                                                static_cast<double>(rounds.dirty_bytes) / (1 << 20),
                                                row.latency.p50_us / 1e3,
                                                mib_per_s(resync_bytes_per_s), ratios));
        report.context.emplace_back(
            fmt::format("reconnect {}", row.operation),
            fmt::format("{:.0f} ms mean from rpmemd listening again to resyncing (backoff, TLS, "
                        "open, lanes), not in the figure",
                        rounds.reconnect_seconds * 1e3 /
                            static_cast<double>(rounds.resync_ns.size())));
    }
}

int run_resync(const ResyncOptions& given, std::ostream& out, std::ostream& err) {
    ResyncOptions options = given;
    if (options.rpmemd.empty())
        options.rpmemd = sibling_in_build_tree("rpmemd/rpmemd", "rpmemd");

    const std::vector<int> cpus = usable_cpus();
    Report report;
    report.benchmark = "resync";
    report.context = {
        {"provider", options.provider},
        {"cpus", std::to_string(cpus.size())},
        {"rounds per fraction", std::to_string(options.repeat)},
        {"resync",
         fmt::format("recovery thread, batches of up to {} copies or {} KiB, a copy up to {} "
                     "contiguous 4 KiB extents; RMA writes from the local pool and one flush_list "
                     "message per lane, over lane 0 and the lanes free then, one drain per lane",
                     client::ResyncShape::batch_copies, client::ResyncShape::batch_bytes >> 10,
                     client::ResyncShape::copy_extents)},
        {"raw", "batches of 16 RMA writes + one 8-byte read, both sides busy-polling"},
        {"PMEM_IS_PMEM_FORCE", std::getenv("PMEM_IS_PMEM_FORCE") != nullptr
                                   ? std::getenv("PMEM_IS_PMEM_FORCE")
                                   : "unset"},
    };
    constexpr RawOperation kShapes[] = {RawOperation::batch};
    // A batch of 1 MiB writes moves 16 MiB: few iterations fill a second.
    const SampleLimits raw_limits{.iterations = 500, .duration = 1.0};
    if (auto raw =
            measure_raw_baseline(options.provider, kShapes, kRawSizes, raw_limits, cpus, report);
        !raw) {
        fmt::print(err, "rpmem-bench resync: raw baseline: {}\n", raw.error().message());
        return kExitFailure;
    }
    std::vector<ResyncRounds> results;
    unsigned lanes = 0;
    {
        ResyncBench bench(options);
        if (auto measured = bench.run(report, results); !measured) {
            fmt::print(err, "rpmem-bench resync: {} (files kept in {})\n",
                       measured.error().message(), bench.directory().string());
            return kExitFailure;
        }
        lanes = bench.lanes();
    }
    add_results(report, results, lanes);
    return write_report(report, options.output, "rpmem-bench resync", out, err);
}

} // namespace

void add_resync_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "resync", "a degraded replica's online resync against the raw write bandwidth",
        "The online resync of a degraded replica (on-replica-failure = continue) against the raw\n"
        "write bandwidth of the fabric, both measured in this run on loopback. A real rpmemd\n"
        "serves the pool; each round kills it with SIGKILL, persists the chosen fraction of the\n"
        "pool while the replica is degraded (4 KiB extents in random order, spread over the\n"
        "pool: only the dirty map records them), restarts rpmemd on the same port and waits\n"
        "until the replica's recovery thread has reconnected and copied the missed extents. The\n"
        "resync time runs from the new session's install (state resyncing) to in_sync; the\n"
        "reconnect (backoff, TLS, open, lanes) is reported apart. After each round the target's\n"
        "copy must equal the local pool (digests). The replica asks for --lanes lanes; the\n"
        "resync uses lane 0 and whichever others are free.\n"
        "\n"
        "Rows: raw-batch at 64K and 1M (16 RMA writes + one 8-byte read; MB/s counts all 16),\n"
        "then resync-FRACTION per fraction (size: bytes dirty per round, one sample per round).\n"
        "The context gives each resync's throughput (bytes / p50 time) in MiB/s and as a ratio\n"
        "to the raw write bandwidths (bytes / p50 time of a batch).",
        kPoolFooter, output, &run_resync);
    add_loopback_options(*command, *options, "256M");
    command
        ->add_option("--dirty", options->dirty,
                     "fractions of the pool written while degraded (default 0.01,0.1,1)")
        ->delimiter(',')
        ->check(CLI::PositiveNumber & CLI::Range(0.0, 1.0));
    command->add_option("--repeat", options->repeat, "rounds per fraction (default 3)")
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--lanes", options->lanes,
                     "lanes asked for (default 16: librpmem grants one per core at most)")
        ->check(CLI::Range(1U, 16U));
    add_output_options(*command, options->output);
}

} // namespace rpmem::bench
