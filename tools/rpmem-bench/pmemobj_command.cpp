// SPDX-License-Identifier: BSD-3-Clause
// `rpmem-bench pmemobj`: the product's promise, measured. An unmodified libpmemobj workload of
// small transactions runs on a local pool, then on a pool set with a REPLICA line served by a
// real rpmemd (TLS control channel, fabric data path) on loopback, with Debian's libpmemobj
// loading our librpmem.so.1. The mark is not PMDK's old figure but the fabric itself: the
// median replicated transaction against (persists per transaction x the raw one-op round
// trip), both measured in this run. Persists per transaction come from librpmem's own count
// (its close line at log level info), as the difference between a session that ran the
// workload and one that only opened and closed the pool.
//
// With --replicas N (N > 1), a pool set with N REPLICA lines, to N rpmemd, runs the same
// workload after the one-replica row, and the context gives its median as a ratio to the
// one-replica median of this run (librpmem's fan-out makes N replicas cost about one), with the
// CPU each transaction cost the program and the daemons.
//
// With --pmdk-peer TREE, PMDK 1.12.1's own librpmem and rpmemd (pmdk_peer.h) run the same
// workload last, GPSPM and APM, and the context gives each as a ratio to pmemobj-replicated.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <link.h>
#include <unistd.h>

#include "bench_options.h"
#include "client/session_usage.h"
#include "command.h"
#include "cpu_affinity.h"
#include "pmdk_peer.h"
#include "pmemobj_workload.h"
#include "process_cpu.h"
#include "raw_baseline.h"
#include "result_report.h"
#include "rpmemd_process.h"
#include "sampling.h"
#include "scratch_files.h"
#include "work_directory.h"

namespace rpmem::bench {

namespace {

namespace fs = std::filesystem;

struct PmemobjOptions {
    std::string provider = "tcp";
    SampleLimits limits{.iterations = 20000, .duration = 3.0};
    std::size_t pool_size = 32 << 20;
    std::string pool_dir = "/dev/shm";
    unsigned replicas = 1;
    unsigned rounds = 1;
    TransactionShape shape;
    double gap_us = 0;
    bool busy_poll = false;  // both sides spin without end: the figure the defaults are held to
    std::string reply_delay; // every rpmemd's inject-reply-delay (a longer link); empty: none
    std::string replication = "sync"; // librpmem's RPMEM_REPLICATION for every replicated row
    std::string max_lag;              // RPMEM_MAX_LAG; empty: librpmem's default
    fs::path rpmemd;
    fs::path librpmem;
    fs::path pmdk_peer; // a PMDK 1.12 build tree, or empty
    OutputOptions output;
};

struct DlCloser {
    void operator()(void* handle) const noexcept { ::dlclose(handle); }
};
using LibraryHandle = std::unique_ptr<void, DlCloser>;

// Loads librpmem.so.1 from `path` before libpmemobj asks for it: its dlopen("librpmem.so.1")
// then finds this object by its SONAME, so the benchmark measures the library it names.
Result<LibraryHandle> load_librpmem(const fs::path& path, std::string& loaded_from) {
    LibraryHandle handle(::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL));
    if (!handle)
        return fail(ELIBACC, fmt::format("loading {}: {}", path.string(), ::dlerror()));
    link_map* map = nullptr;
    if (::dlinfo(handle.get(), RTLD_DI_LINKMAP, &map) == 0 && map != nullptr)
        loaded_from = map->l_name;
    return handle;
}

// The round trips of a session's usage record (client/session_usage.h).
std::uint64_t round_trips(const client::SessionUsage& usage) noexcept {
    return usage.persists + usage.deep_persists + usage.drains;
}

// The record of the last replica closed, from librpmem's RPMEM_USAGE_FILE.
Result<client::SessionUsage> last_session_usage(const fs::path& file) {
    auto records = client::read_usage_records(file);
    if (!records)
        return fail(std::move(records.error()));
    if (records->empty())
        return fail(ENOENT, fmt::format("{} has no usage record of librpmem", file.string()));
    return records->back();
}

// The persists librpmem's last `sessions` records count as posted by a sibling (fan-out).
Result<std::uint64_t> posted_by_siblings(const fs::path& file, unsigned sessions) {
    auto records = client::read_usage_records(file);
    if (!records)
        return fail(std::move(records.error()));
    std::uint64_t total = 0;
    for (std::size_t i = records->size() > sessions ? records->size() - sessions : 0;
         i < records->size(); ++i)
        total += (*records)[i].posted_by_sibling;
    return total;
}

// CPU per transaction of this process and of the daemons, over one row.
class CpuMeter {
public:
    explicit CpuMeter(std::vector<pid_t> daemons)
        : daemons_(std::move(daemons))
        , client_(process_cpu_seconds())
        , daemon_(daemons_cpu()) {}

    struct Used {
        double client_s = 0;
        double daemon_s = 0;
    };
    Used used() const { return {process_cpu_seconds() - client_, daemons_cpu() - daemon_}; }

    static std::string per(const Used& used, std::uint64_t operations) {
        const double n = static_cast<double>(std::max<std::uint64_t>(operations, 1));
        return fmt::format("client {:.1f} us, daemons {:.1f} us (user + system)",
                           used.client_s / n * 1e6, used.daemon_s / n * 1e6);
    }

private:
    double daemons_cpu() const {
        double total = 0;
        for (pid_t pid : daemons_)
            total += process_tree_cpu_seconds(pid);
        return total;
    }

    std::vector<pid_t> daemons_;
    double client_;
    double daemon_;
};

// One measured row of the workload on `pool_set`, opened (created before) by the caller.
Result<ResultRow> run_workload(const std::string& name, WorkloadPool& pool,
                               const PmemobjOptions& options) {
    auto row = sample_latency(name, 64, options.limits, [&](std::size_t) {
        return pool.transaction(pool.committed(), options.shape);
    });
    if (!row)
        return row;
    if (!pool.last_slot_intact())
        return fail(EIO, name + ": the last transaction's slot does not hold its data");
    row->wait = options.busy_poll ? "busy-poll" : "librpmem default";
    return row;
}

class PmemobjBench {
public:
    explicit PmemobjBench(const PmemobjOptions& options)
        : options_(options) {}

    Result<void> run(Report& report) {
        auto work = WorkDirectory::make(options_.pool_dir, WorkDirectory::Cleanup::after_success);
        if (!work)
            return fail(std::move(work.error()));
        work_.emplace(std::move(*work));
        dir_ = work_->path();

        // The local baseline: the same workload, no replica.
        const fs::path local_set = dir_ / "local.set";
        if (auto written =
                write_text(local_set, pool_set_text(options_.pool_size, dir_ / "local.part0", {}));
            !written)
            return written;
        {
            auto pool = WorkloadPool::create(local_set);
            if (!pool)
                return fail(std::move(pool.error()));
            auto row = run_workload("pmemobj-local", *pool, options_);
            if (!row)
                return fail(std::move(row.error()));
            report.rows.push_back(std::move(*row));
        }

        // One rpmemd per replica, all with the first one's credentials.
        for (unsigned k = 0; k < options_.replicas; ++k) {
            std::vector<std::string> config;
            if (options_.busy_poll)
                config.push_back("responder-spin = 10ms"); // the most it takes
            if (!options_.reply_delay.empty())
                config.push_back("inject-reply-delay = " + options_.reply_delay);
            auto rpmemd =
                RpmemdProcess::start(options_.rpmemd, dir_ / fmt::format("rpmemd{}", k), config,
                                     k == 0 ? nullptr : &rpmemd_[0]->credentials());
            if (!rpmemd)
                return fail(std::move(rpmemd.error()));
            rpmemd_.push_back(std::move(*rpmemd));
            RpmemdProcess& daemon = *rpmemd_.back();
            report.context.emplace_back(
                fmt::format("rpmemd {}", k),
                fmt::format("{} on 127.0.0.1:{}, log {}{}", options_.rpmemd.string(), daemon.port(),
                            daemon.log_file().string(),
                            options_.reply_delay.empty()
                                ? ""
                                : ", inject-reply-delay " + options_.reply_delay));
            for (const char* set : {"bench.set", "group.set"})
                if (auto written = write_text(
                        daemon.poolset_dir() / set,
                        pool_set_text(options_.pool_size,
                                      dir_ / fmt::format("target{}-{}.part0", k, set), {}));
                    !written)
                    return written;
        }
        const fs::path replicated_set = dir_ / "replicated.set";
        if (auto written = write_text(
                replicated_set, pool_set_text(options_.pool_size, dir_ / "replicated.part0",
                                              {fmt::format("rpmem-bench@127.0.0.1:{} bench.set",
                                                           rpmemd_[0]->port())}));
            !written)
            return written;
        // librpmem reads its settings once, at its first pool; none was opened yet.
        const fs::path client_log = dir_ / "librpmem.log";
        const fs::path usage_file = dir_ / "librpmem-usage.jsonl";
        const channel::CredentialFiles& tls = rpmemd_[0]->credentials();
        ::setenv("RPMEM_TLS_CA", tls.ca_certificate.c_str(), 1);
        ::setenv("RPMEM_TLS_CERT", tls.client_certificate.c_str(), 1);
        ::setenv("RPMEM_TLS_KEY", tls.client_key.c_str(), 1);
        ::setenv("RPMEM_PROVIDER", options_.provider.c_str(), 1);
        ::setenv("RPMEM_ENABLE_SOCKETS", options_.provider == "sockets" ? "1" : "0", 1);
        ::setenv("RPMEM_LOG_LEVEL", "info", 1);
        ::setenv("RPMEM_LOG_FILE", client_log.c_str(), 1);
        ::setenv("RPMEM_USAGE_FILE", usage_file.c_str(), 1);
        if (options_.busy_poll)
            ::setenv("RPMEM_SPIN_US", "1000000", 1); // its most, 1 s
        ::setenv("RPMEM_REPLICATION", options_.replication.c_str(), 1);
        if (!options_.max_lag.empty())
            ::setenv("RPMEM_MAX_LAG", options_.max_lag.c_str(), 1);
        report.context.emplace_back(
            "replication",
            options_.replication == "async"
                ? fmt::format("async (RPMEM_MAX_LAG {})",
                              options_.max_lag.empty() ? "default 8M" : options_.max_lag)
                : std::string("sync"));

        {
            auto created = WorkloadPool::create(replicated_set);
            if (!created)
                return fail(std::move(created.error()));
        }
        // A session that only opens and closes: what the workload's session adds to it is the
        // workload's.
        {
            auto opened = WorkloadPool::open(replicated_set);
            if (!opened)
                return fail(std::move(opened.error()));
        }
        auto idle = last_session_usage(usage_file);
        if (!idle)
            return fail(std::move(idle.error()));
        std::uint64_t transactions = 0;
        {
            auto pool = WorkloadPool::open(replicated_set);
            if (!pool)
                return fail(std::move(pool.error()));
            const std::uint64_t before = pool->committed();
            const CpuMeter cpu(daemon_pids(1));
            auto row = run_workload("pmemobj-replicated", *pool, options_);
            if (!row)
                return fail(std::move(row.error()));
            replicated_cpu_ = cpu.used();
            transactions = pool->committed() - before;
            report.context.emplace_back("cpu per transaction, pmemobj-replicated",
                                        CpuMeter::per(replicated_cpu_, transactions));
            report.rows.push_back(std::move(*row));
            replicated_row_ = report.rows.size() - 1;
        }
        auto busy = last_session_usage(usage_file);
        if (!busy)
            return fail(std::move(busy.error()));
        if (busy->asynchronous)
            report.context.emplace_back(
                "replication lag, pmemobj-replicated",
                fmt::format("p50 {} us, p99 {} us (bucket upper bounds; the age of each "
                            "acknowledged message's oldest record); at most {} us and {} bytes",
                            busy->lag_p50_us, busy->lag_p99_us, busy->max_lag_us,
                            busy->max_lag_bytes));
        else if (options_.replication == "async")
            return fail(EPROTO, "RPMEM_REPLICATION=async, but librpmem replicated synchronously "
                                "(see its log: an older rpmemd?)");
        if (transactions == 0 || round_trips(*busy) < round_trips(*idle))
            return fail(EIO, "librpmem's persist counts do not add up");
        persists_per_transaction_ = static_cast<double>(round_trips(*busy) - round_trips(*idle)) /
                                    static_cast<double>(transactions);
        report.context.emplace_back(
            "persists per transaction",
            fmt::format("{:.2f} ({} round trips over {} transactions, librpmem's count)",
                        persists_per_transaction_, round_trips(*busy) - round_trips(*idle),
                        transactions));
        const std::uint64_t persists = round_trips(*busy) - round_trips(*idle);
        put_cpu_per_persist(report.rows[replicated_row_], replicated_cpu_, persists);
        report.context.emplace_back("cpu per persist, pmemobj-replicated",
                                    CpuMeter::per(replicated_cpu_, persists));
        if (options_.replicas > 1) {
            if (auto group = run_group(report); !group)
                return group;
            if (auto rounds = run_more_rounds(replicated_set, report); !rounds)
                return rounds;
        }
        work_->succeeded();
        return {};
    }

    double persists_per_transaction() const noexcept { return persists_per_transaction_; }
    const fs::path& directory() const noexcept { return dir_; }

private:
    std::vector<pid_t> daemon_pids(unsigned count) const {
        std::vector<pid_t> pids;
        for (unsigned k = 0; k < count && k < rpmemd_.size(); ++k)
            pids.push_back(rpmemd_[k]->pid());
        return pids;
    }

    // The p50 of one more row of the workload on `pool_set`, added to the report.
    Result<double> run_round(const fs::path& pool_set, const std::string& name, unsigned round,
                             Report& report) {
        auto pool = WorkloadPool::open(pool_set);
        if (!pool)
            return fail(std::move(pool.error()));
        auto row = run_workload(name, *pool, options_);
        if (!row)
            return fail(std::move(row.error()));
        row->wait = fmt::format("{}, round {}", row->wait, round);
        const double p50 = row->latency.p50_us;
        report.rows.push_back(std::move(*row));
        return p50;
    }

    // Rounds 2 .. R: one line, then N lines, in turn, so that the machine's drift hits both;
    // the ratio of each round (round 1 included) and their median.
    Result<void> run_more_rounds(const fs::path& replicated_set, Report& report) {
        if (options_.rounds < 2)
            return {};
        const std::string name = fmt::format("pmemobj-replicas-{}", options_.replicas);
        std::vector<double> ratios{p50_of(report, name, 64) /
                                   p50_of(report, "pmemobj-replicated", 64)};
        for (unsigned round = 2; round <= options_.rounds; ++round) {
            auto one = run_round(replicated_set, "pmemobj-replicated", round, report);
            if (!one)
                return fail(std::move(one.error()));
            auto group = run_round(dir_ / "group.set", name, round, report);
            if (!group)
                return fail(std::move(group.error()));
            ratios.push_back(*group / *one);
        }
        std::string listed;
        for (double ratio : ratios)
            listed += fmt::format("{}{:.2f}x", listed.empty() ? "" : ", ", ratio);
        std::vector<double> sorted = ratios;
        std::sort(sorted.begin(), sorted.end());
        const std::size_t middle = sorted.size() / 2;
        const double median =
            sorted.size() % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
        report.context.emplace_back(fmt::format("p50 {} / pmemobj-replicated by round", name),
                                    fmt::format("{}; median {:.2f}x", listed, median));
        return {};
    }

    // The same workload on a pool set with a REPLICA line per rpmemd.
    Result<void> run_group(Report& report) {
        std::vector<std::string> replicas;
        for (const auto& daemon : rpmemd_)
            replicas.push_back(fmt::format("rpmem-bench@127.0.0.1:{} group.set", daemon->port()));
        const fs::path group_set = dir_ / "group.set";
        if (auto written = write_text(
                group_set, pool_set_text(options_.pool_size, dir_ / "group.part0", replicas));
            !written)
            return written;
        {
            auto created = WorkloadPool::create(group_set);
            if (!created)
                return fail(std::move(created.error()));
        }
        const std::string name = fmt::format("pmemobj-replicas-{}", options_.replicas);
        std::uint64_t transactions = 0;
        {
            auto pool = WorkloadPool::open(group_set);
            if (!pool)
                return fail(std::move(pool.error()));
            const std::uint64_t before = pool->committed();
            const CpuMeter cpu(daemon_pids(options_.replicas));
            auto row = run_workload(name, *pool, options_);
            if (!row)
                return fail(std::move(row.error()));
            transactions = pool->committed() - before;
            const CpuMeter::Used used = cpu.used();
            report.context.emplace_back("cpu per transaction, " + name,
                                        CpuMeter::per(used, transactions));
            // The same persists per transaction as one line (libpmemobj does not know of
            // replicas): each is made on every replica.
            put_cpu_per_persist(*row, used,
                                static_cast<std::uint64_t>(persists_per_transaction_ *
                                                           static_cast<double>(transactions)));
            report.rows.push_back(std::move(*row));
        } // closes the replicas: their usage records
        // librpmem's fan-out: the persists a sibling's call had posted, over the workload.
        auto posted = posted_by_siblings(dir_ / "librpmem-usage.jsonl", options_.replicas);
        if (!posted)
            return fail(std::move(posted.error()));
        report.context.emplace_back(
            "fan-out, " + name,
            fmt::format("{} persists answered by a sibling's post in {} transactions", *posted,
                        transactions));
        return {};
    }

    static void put_cpu_per_persist(ResultRow& row, const CpuMeter::Used& used,
                                    std::uint64_t persists) {
        const double n = static_cast<double>(std::max<std::uint64_t>(persists, 1));
        row.client_cpu_us_per_persist = used.client_s / n * 1e6;
        row.daemon_cpu_us_per_persist = used.daemon_s / n * 1e6;
    }

    const PmemobjOptions& options_;
    CpuMeter::Used replicated_cpu_;
    std::size_t replicated_row_ = 0;
    std::optional<WorkDirectory> work_; // first: removed after everything in it closed
    fs::path dir_;
    std::vector<std::unique_ptr<RpmemdProcess>> rpmemd_;
    double persists_per_transaction_ = 0;
};

void add_ratios(Report& report, double persists_per_transaction) {
    const double local = p50_of(report, "pmemobj-local", 64);
    const double replicated = p50_of(report, "pmemobj-replicated", 64);
    for (const char* raw : {"raw-commit", "raw-gpspm"}) {
        const double round_trip = p50_of(report, raw, 64);
        if (round_trip <= 0 || persists_per_transaction <= 0)
            continue;
        const double floor = persists_per_transaction * round_trip;
        report.context.emplace_back(
            fmt::format("p50 pmemobj-replicated vs {}", raw),
            fmt::format("{:.1f} us = {:.2f}x ({:.2f} persists x {:.1f} us = {:.1f} us)", replicated,
                        replicated / floor, persists_per_transaction, round_trip, floor));
    }
    for (const ResultRow& row : report.rows) {
        // The first row of N lines (later rounds have their own line).
        if (row.operation.rfind("pmemobj-replicas-", 0) != 0 || replicated <= 0 ||
            row.wait.find("round") != std::string::npos)
            continue;
        const double group = p50_of(report, row.operation, 64);
        report.context.emplace_back(
            fmt::format("p50 {} vs pmemobj-replicated", row.operation),
            fmt::format("{:.1f} us vs {:.1f} us = {:.2f}x (serial fan-out would cost about "
                        "{}x, parallel about 1x)",
                        group, replicated, group / replicated,
                        row.operation.substr(std::string_view("pmemobj-replicas-").size())));
    }
    if (local > 0)
        report.context.emplace_back("p50 pmemobj-local",
                                    fmt::format("{:.1f} us (no replica)", local));
}

// PMDK's rows after ours: the transaction against ours, and CPU per persist taking the
// persists per transaction librpmem counted for ours (libpmemobj makes the same persists
// whichever librpmem it loaded).
void add_pmdk_rows(Report& report, std::vector<PmdkPeer::Row> rows,
                   double persists_per_transaction) {
    const double ours = p50_of(report, "pmemobj-replicated", 64);
    for (PmdkPeer::Row& peer : rows) {
        const double persists =
            std::max(1.0, static_cast<double>(peer.transactions) * persists_per_transaction);
        peer.row.client_cpu_us_per_persist = peer.client_cpu_s / persists * 1e6;
        peer.row.daemon_cpu_us_per_persist = peer.daemon_cpu_s / persists * 1e6;
        if (ours > 0)
            report.context.emplace_back(
                fmt::format("p50 {} vs pmemobj-replicated", peer.row.operation),
                fmt::format("{:.1f} us vs {:.1f} us: ours {:.2f}x faster ({})",
                            peer.row.latency.p50_us, ours, peer.row.latency.p50_us / ours,
                            peer.row.wait));
        report.rows.push_back(std::move(peer.row));
    }
}

// What libpmemobj does with each transaction, for both librpmem: one sample per transaction.
PmdkPeer::Measure workload_measure(const PmemobjOptions& options) {
    return [&options](const std::string& name, WorkloadPool& pool) {
        return run_workload(name, pool, options);
    };
}

int run_pmemobj(const PmemobjOptions& given, std::ostream& out, std::ostream& err) {
    PmemobjOptions options = given;
    options.shape.gap = std::chrono::nanoseconds(static_cast<std::int64_t>(options.gap_us * 1e3));
    if (options.rpmemd.empty())
        options.rpmemd = sibling_in_build_tree("rpmemd/rpmemd", "rpmemd");
    if (options.librpmem.empty())
        options.librpmem = sibling_in_build_tree("lib/capi/librpmem.so.1", "librpmem.so.1");
    // Forked first: before this process loads our librpmem or starts a thread.
    std::optional<PmdkPeer> peer;
    if (!options.pmdk_peer.empty()) {
        auto build = PmdkPeer::Build::in(options.pmdk_peer);
        if (!build) {
            fmt::print(err, "rpmem-bench pmemobj: --pmdk-peer: {}\n", build.error().message());
            return kExitUsage;
        }
        auto forked = PmdkPeer::fork(std::move(*build), options.pool_dir, options.pool_size,
                                     workload_measure(options));
        if (!forked) {
            fmt::print(err, "rpmem-bench pmemobj: {}\n", forked.error().message());
            return kExitFailure;
        }
        peer.emplace(std::move(*forked));
    }
    std::string loaded_from;
    auto librpmem = load_librpmem(options.librpmem, loaded_from);
    if (!librpmem) {
        fmt::print(err, "rpmem-bench pmemobj: {}\n", librpmem.error().message());
        return kExitFailure;
    }

    const std::vector<int> cpus = usable_cpus();
    Report report;
    report.benchmark = "pmemobj";
    report.context = {
        {"provider", options.provider},
        {"cpus", std::to_string(cpus.size())},
        {"librpmem", loaded_from},
        {"transaction",
         fmt::format("{} object(s) snapshotted and rewritten, {} us of busy work before each "
                     "snapshot and before the commit",
                     options.shape.objects, options.gap_us)},
        {"waiting",
         options.busy_poll
             ? "busy-poll (RPMEM_SPIN_US 1 s and responder-spin 10ms, both at their most)"
             : "librpmem's and rpmemd's defaults"},
        {"PMEM_IS_PMEM_FORCE", std::getenv("PMEM_IS_PMEM_FORCE") != nullptr
                                   ? std::getenv("PMEM_IS_PMEM_FORCE")
                                   : "unset"},
    };
    constexpr RawOperation kShapes[] = {RawOperation::commit, RawOperation::gpspm};
    constexpr std::size_t kSizes[] = {64};
    if (auto raw =
            measure_raw_baseline(options.provider, kShapes, kSizes, options.limits, cpus, report);
        !raw) {
        fmt::print(err, "rpmem-bench pmemobj: raw baseline: {}\n", raw.error().message());
        return kExitFailure;
    }
    double persists_per_transaction = 0;
    {
        PmemobjBench bench(options);
        if (auto measured = bench.run(report); !measured) {
            fmt::print(err, "rpmem-bench pmemobj: {} (files kept in {})\n",
                       measured.error().message(), bench.directory().string());
            return kExitFailure;
        }
        persists_per_transaction = bench.persists_per_transaction();
    }
    add_ratios(report, persists_per_transaction);
    if (peer) {
        report.context.emplace_back("pmdk peer",
                                    fmt::format("{} and {}", peer->build().librpmem.string(),
                                                peer->build().rpmemd.string()));
        auto rows = peer->measure();
        if (!rows) {
            fmt::print(err, "rpmem-bench pmemobj: {}\n", rows.error().message());
            return kExitFailure;
        }
        add_pmdk_rows(report, std::move(*rows), persists_per_transaction);
    }
    return write_report(report, options.output, "rpmem-bench pmemobj", out, err);
}

} // namespace

void add_pmemobj_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "pmemobj", "libpmemobj transactions on a replicated pool against the fabric's floor",
        "Small libpmemobj transactions (snapshot a 64-byte slot and a counter, rewrite, commit),\n"
        "first on a local pool, then on a pool set with a REPLICA line served by a real rpmemd\n"
        "on 127.0.0.1; libpmemobj loads librpmem.so.1 as it does in production. Rows: raw-commit\n"
        "and raw-gpspm at 64 B (the fabric's one-op round trips), pmemobj-local,\n"
        "pmemobj-replicated. The context gives the persists each transaction made and the median\n"
        "replicated transaction as a ratio to (persists per transaction x raw-commit round\n"
        "trip). With --replicas N > 1, a row pmemobj-replicas-N follows (N REPLICA lines to N\n"
        "rpmemd), and the context gives it as a ratio to pmemobj-replicated (one REPLICA line) of\n"
        "the same run, and the CPU per transaction of this program and of the daemons (user +\n"
        "system).",
        kPoolFooter, output, &run_pmemobj);
    command->add_option("--provider", options->provider, "tcp (default) or sockets");
    command
        ->add_option("--transactions", options->limits.iterations,
                     "measured transactions per row, at most (default 20000)")
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--duration", options->limits.duration,
                     "stop a row after this many seconds (default 3)")
        ->check(CLI::PositiveNumber);
    command->add_option("--pool-size", options->pool_size, "pool size (default 32M, at least 8M)")
        ->transform(size_value())
        ->check(CLI::Range(std::size_t{8} << 20, std::numeric_limits<std::size_t>::max()));
    command->add_option("--pool-dir", options->pool_dir,
                        "where the pool files go, both sides (default /dev/shm)");
    command
        ->add_option("--replicas", options->replicas,
                     "also measure N REPLICA lines to N rpmemd (1 to 8; default 1)")
        ->check(CLI::Range(1u, 8u));
    command
        ->add_option("--rounds", options->rounds,
                     "with --replicas, measure one line and N lines R times in turn and give the "
                     "ratio of each round and their median (default 1)")
        ->check(CLI::Range(1u, 100u));
    command
        ->add_option("--objects", options->shape.objects,
                     "objects each transaction snapshots and rewrites (1 to 64; default 1)")
        ->check(CLI::Range(1u, 64u));
    command
        ->add_option("--gap-us", options->gap_us,
                     "busy work before each snapshot and before the commit, microseconds: the "
                     "gaps a real program leaves between persists (default 0)")
        ->check(CLI::Range(0.0, 100000.0));
    command->add_flag("--busy-poll", options->busy_poll,
                      "both sides spin across every gap (RPMEM_SPIN_US 1 s, rpmemd's "
                      "responder-spin 10ms): what the defaults are held to");
    command->add_option("--reply-delay", options->reply_delay,
                        "every rpmemd holds each data-path reply this long (its "
                        "inject-reply-delay, e.g. 500us): the round trip of a farther link");
    command
        ->add_option("--replication", options->replication,
                     "sync (default) or async: librpmem's RPMEM_REPLICATION for the replicated "
                     "rows")
        ->check(CLI::IsMember({"sync", "async"}));
    command->add_option("--max-lag", options->max_lag,
                        "with --replication async: RPMEM_MAX_LAG (e.g. 1M; default 8M)");
    command->add_option("--rpmemd", options->rpmemd,
                        "the daemon (default: this build tree's, else rpmemd from PATH)");
    command->add_option("--librpmem", options->librpmem,
                        "the library libpmemobj gets (default: this build tree's, else the "
                        "system's librpmem.so.1)");
    command->add_option("--pmdk-peer", options->pmdk_peer,
                        "also measure PMDK 1.12's librpmem and rpmemd from this build tree "
                        "(rows pmemobj-pmdk-gpspm and pmemobj-pmdk-apm, sockets provider)");
    add_output_options(*command, options->output);
}

} // namespace rpmem::bench
