// SPDX-License-Identifier: BSD-3-Clause
// `rpmem-bench digest`: what comparing an unchanged pool with its replica by digests costs (what
// rpmemctl verify and consistency on open do). A real rpmemd on loopback serves a copy of the
// local pool; each round times the comparison (the local pool hashed in the background while
// the target hashes its copy and answers DigestRequests, then the two vectors compared), and,
// apart, its two halves. The mark is hashing the same local bytes with XXH3 in this process,
// measured in the same rounds, and reading them.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "bench_options.h"
#include "client/extent_digest.h"
#include "client/replica.h"
#include "command.h"
#include "loopback_replica.h"
#include "protocol/request.h"
#include "result_report.h"

namespace rpmem::bench {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The first page is each side's own header; verify and consistency on open compare the rest.
constexpr std::size_t kHeader = 4096;
// The bound for an unchanged 1 GiB pool on this machine.
constexpr double kBoundSeconds = 2.0;

struct DigestOptions : LoopbackOptions {
    DigestOptions() { pool_size = std::size_t{1} << 30; }

    std::size_t extent_size = 1 << 20;
    std::size_t repeat = 5;
    OutputOptions output;
};

std::uint64_t nanoseconds_since(Clock::time_point from) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - from).count());
}

// The samples of each part of a round, nanoseconds.
struct DigestSamples {
    std::vector<std::uint64_t> compare; // the whole comparison, as verify does it
    std::vector<std::uint64_t> remote;  // DigestRequests alone: the target hashes, round trips
    std::vector<std::uint64_t> hash;    // the local bytes hashed in this process
    std::vector<std::uint64_t> read;    // the local bytes read (summed)
};

class DigestBench {
public:
    explicit DigestBench(const DigestOptions& options)
        : options_(options) {}

    Result<void> run(Report& report, DigestSamples& samples) {
        if (auto started = start(report); !started)
            return started;
        for (std::size_t round = 0; round < options_.repeat; ++round) {
            if (auto measured = measure_round(samples); !measured)
                return fail(
                    std::move(measured.error().add_context(fmt::format("round {}", round + 1))));
        }
        auto closed = bench_->close();
        if (!closed)
            return closed;
        return {};
    }

    // Where the files are kept after a failure.
    fs::path directory() const {
        return bench_ ? bench_->directory() : fs::path(options_.pool_dir);
    }

private:
    Result<void> start(Report& report) {
        auto bench = LoopbackReplica::make({.pool_dir = options_.pool_dir,
                                            .rpmemd = options_.rpmemd,
                                            .pool_size = options_.pool_size,
                                            .provider = options_.provider,
                                            .set_name = "digest.set"});
        if (!bench)
            return fail(std::move(bench.error()));
        bench_ = std::move(*bench);
        if (auto opened = bench_->open(report); !opened)
            return opened;
        pool_ = bench_->pool();
        // Data that is not zero pages: every word from a generator.
        std::mt19937_64 random(0xd16e57);
        for (std::size_t at = 0; at + 8 <= pool_.size(); at += 8) {
            const std::uint64_t word = random();
            std::memcpy(pool_.data() + at, &word, sizeof word);
        }
        // The replica as replication would have left it: the same bytes. Written into the
        // target's file directly (rpmemd maps it shared), faster than persisting 1 GiB.
        return copy_into(bench_->target_part());
    }

    Result<void> copy_into(const fs::path& target) {
        // in | out: the file stays as rpmemd created it, overwritten in place.
        std::fstream out(target, std::ios::in | std::ios::out | std::ios::binary);
        out.write(reinterpret_cast<const char*>(pool_.data()),
                  static_cast<std::streamsize>(pool_.size()));
        out.flush();
        if (!out)
            return fail(EIO, fmt::format("writing {}", target.string()));
        return {};
    }

    Result<void> measure_round(DigestSamples& samples) {
        const std::size_t length = pool_.size() - kHeader;
        const std::size_t extent = options_.extent_size;

        // The comparison, as rpmemctl verify and consistency on open do it.
        Clock::time_point began = Clock::now();
        auto hashing = std::async(std::launch::async, [&] {
            return client::local_digests(pool_, kHeader, length, extent);
        });
        auto remote = bench_->replica().digests(kHeader, length, extent);
        auto local = hashing.get();
        if (!remote)
            return fail(std::move(remote.error()));
        if (!local)
            return fail(std::move(local.error()));
        const auto differing = client::differing_ranges(*local, *remote, {kHeader, length}, extent);
        samples.compare.push_back(nanoseconds_since(began));
        if (!differing.empty())
            return fail(EIO, fmt::format("the replica differs from the local pool in {} ranges, "
                                         "the first at {}",
                                         differing.size(), differing.front().offset));

        began = Clock::now();
        if (auto alone = bench_->replica().digests(kHeader, length, extent); !alone)
            return fail(std::move(alone.error()));
        samples.remote.push_back(nanoseconds_since(began));

        began = Clock::now();
        if (auto alone = client::local_digests(pool_, kHeader, length, extent); !alone)
            return fail(std::move(alone.error()));
        samples.hash.push_back(nanoseconds_since(began));

        began = Clock::now();
        std::uint64_t sum = 0;
        for (std::size_t at = kHeader; at + 8 <= pool_.size(); at += 8) {
            std::uint64_t word;
            std::memcpy(&word, pool_.data() + at, sizeof word);
            sum += word;
        }
        sink_ = sink_ + sum; // volatile: the loop is not optimised away
        samples.read.push_back(nanoseconds_since(began));
        return {};
    }

    const DigestOptions& options_;
    std::unique_ptr<LoopbackReplica> bench_;
    std::span<std::byte> pool_; // bench_'s
    volatile std::uint64_t sink_ = 0;
};

// One row of `samples`, each moving `bytes`; returns its p50 in seconds.
double add_row(Report& report, const char* operation, std::vector<std::uint64_t> samples,
               std::size_t bytes, const char* wait) {
    ResultRow row;
    row.operation = operation;
    row.size = bytes;
    row.lanes = 1;
    row.wait = wait;
    const double total =
        static_cast<double>(std::accumulate(samples.begin(), samples.end(), std::uint64_t{0})) /
        1e9;
    row.summarise(samples, total, bytes);
    report.rows.push_back(row);
    return row.latency.p50_us / 1e6;
}

void add_results(Report& report, const DigestOptions& options, const DigestSamples& samples) {
    const std::size_t bytes = options.pool_size - kHeader;
    const double compare = add_row(report, "compare", samples.compare, bytes, "control channel");
    const double remote =
        add_row(report, "remote-digests", samples.remote, bytes, "control channel");
    const double hash = add_row(report, "local-hash", samples.hash, bytes, "in process");
    const double read = add_row(report, "local-read", samples.read, bytes, "in process");
    const double mib = static_cast<double>(bytes) / (1 << 20);
    report.context.emplace_back(
        "p50 compare",
        fmt::format("{:.0f} MiB in {:.3f} s ({} the {:.0f} s bound), {:.2f}x hashing them here "
                    "({:.3f} s, {:.0f} MiB/s), {:.2f}x reading them ({:.3f} s)",
                    mib, compare, compare <= kBoundSeconds ? "within" : "over", kBoundSeconds,
                    compare / hash, hash, mib / hash, compare / read, read));
    report.context.emplace_back(
        "p50 remote-digests",
        fmt::format(
            "{:.3f} s alone, {:.2f}x hashing here: the target hashes its copy and "
            "answers {} requests",
            remote, remote / hash,
            (bytes +
             protocol::digest_request_span(static_cast<std::uint32_t>(options.extent_size)) - 1) /
                protocol::digest_request_span(static_cast<std::uint32_t>(options.extent_size))));
}

int run_digest(const DigestOptions& given, std::ostream& out, std::ostream& err) {
    DigestOptions options = given;
    if (options.rpmemd.empty())
        options.rpmemd = sibling_in_build_tree("rpmemd/rpmemd", "rpmemd");

    Report report;
    report.benchmark = "digest";
    report.context = {
        {"provider", options.provider},
        {"rounds", std::to_string(options.repeat)},
        {"extent size", std::to_string(options.extent_size)},
        {"compare", "local XXH3 in a second thread while rpmemd answers DigestRequests, as "
                    "rpmemctl verify"},
        {"PMEM_IS_PMEM_FORCE", std::getenv("PMEM_IS_PMEM_FORCE") != nullptr
                                   ? std::getenv("PMEM_IS_PMEM_FORCE")
                                   : "unset"},
    };
    DigestSamples samples;
    {
        DigestBench bench(options);
        if (auto measured = bench.run(report, samples); !measured) {
            fmt::print(err, "rpmem-bench digest: {} (files kept in {})\n",
                       measured.error().message(), bench.directory().string());
            return kExitFailure;
        }
    }
    add_results(report, options, samples);
    return write_report(report, options.output, "rpmem-bench digest", out, err);
}

} // namespace

void add_digest_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "digest", "comparing an unchanged pool with its replica by digests",
        "Comparing an unchanged pool with its replica by per-extent digests (XXH3-64), as\n"
        "rpmemctl verify and consistency on open do, against hashing the same bytes in this\n"
        "process, both measured in this run on loopback. A real rpmemd serves a copy of the\n"
        "local pool (random data); each round times the comparison (the local pool hashed in a\n"
        "second thread while rpmemd hashes its copy and answers DigestRequests), then the\n"
        "DigestRequests alone, hashing the local bytes alone and reading them. The pool files\n"
        "belong on tmpfs: from a cold disk the comparison is as fast as the disk.\n"
        "\n"
        "Rows (size: bytes compared, the pool after its 4 KiB header; one sample per round):\n"
        "compare, remote-digests, local-hash, local-read. The context gives the comparison's p50\n"
        "against the 2 s bound and as ratios to hashing and reading the bytes here.",
        kPoolFooter, output, &run_digest);
    add_loopback_options(*command, *options, "1G");
    command
        ->add_option("--extent-size", options->extent_size,
                     "bytes per digest (default 1M; a power of two from 4K to 64M)")
        ->transform(size_value())
        ->check(CLI::Validator(
            [](const std::string& text) {
                const auto size = std::stoull(text);
                return protocol::check_digest_extent_size(size)
                           ? std::string("takes a power of two from 4K to 64M")
                           : std::string();
            },
            "SIZE"));
    command->add_option("--repeat", options->repeat, "rounds (default 5)")
        ->check(CLI::PositiveNumber);
    add_output_options(*command, options->output);
}

} // namespace rpmem::bench
