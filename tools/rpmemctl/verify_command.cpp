// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl verify SET [--repair] [--extent-size N] [--json]`: on the initiator, while the pool
// is not open elsewhere, compares the local pool of the pool set file SET with each of its
// remote replicas (`REPLICA [user@]host[:port] remote.set` lines) by per-extent digests, lists
// the ranges that differ and, with --repair, rewrites them from the local pool.
//
// What is compared is what replication writes: like libpmemobj, which hands librpmem its master
// replica from the pool's first byte with the pool set's size, offsets are the same on both
// sides, and the first 4096 bytes (each side's own pool header) are left out. Of a libpmemobj
// pool, the bytes libpmemobj keeps only in its mapping and never hands to librpmem are left
// out too (client/pmemobj_local_fields.h, the rule consistency on open uses): an extent whose
// digests differ and that holds such fields is compared again byte by byte without them.
#include <algorithm>
#include <cerrno>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "client/extent_digest.h"
#include "client/master_proof.h"
#include "client/pmemobj_local_fields.h"
#include "client/replica.h"
#include "client/settings.h"
#include "command.h"
#include "json_text.h"
#include "poolset/parser.h"
#include "poolset/pool_mapping.h"
#include "poolset/pool_set.h"
#include "progress_display.h"
#include "protocol/request.h"
#include "set_file.h"

namespace rpmem::tools {

namespace {

constexpr int kExitDifferent = 1;
constexpr int kExitError = 2;
constexpr std::size_t kDefaultExtentSize = 1 << 20;
constexpr std::size_t kReplicatedFrom = poolset::kHeaderSize;

struct VerifyOptions {
    std::string set;
    bool repair = false;
    std::size_t extent_size = kDefaultExtentSize;
    bool json = false;
};

// What became of one remote replica.
struct ReplicaOutcome {
    const poolset::ReplicaSpec* spec = nullptr;
    std::vector<client::Range> differences; // found by the first comparison
    // libpmemobj's local-only fields that differ, left out (of the first comparison).
    std::vector<client::PmemobjLocalFields::Field> local_only;
    std::uint64_t local_only_bytes = 0;
    bool repaired = false;                // --repair rewrote the differences
    std::vector<client::Range> remaining; // differences after the repair
    std::optional<Error> error;
};

// The local pool: replica 0 of the set, mapped (and locked against other users) as libpmemobj
// maps it, and the range replication writes.
struct LocalPool {
    poolset::PoolMapping mapping;
    client::Range replicated;
    client::PmemobjLocalFields local_fields;

    std::span<std::byte> bytes() const {
        return {reinterpret_cast<std::byte*>(mapping.data()), mapping.size()};
    }
};

Result<LocalPool> map_local_pool(const poolset::PoolSet& set) {
    if (set.options.no_headers)
        return fail(EINVAL, set.origin + ": OPTION NOHDRS is for rpmemd's sets, not a local pool");
    if (!set.has_remote_replicas())
        return fail(EINVAL, set.origin + ": no REPLICA line names a remote replica");
    auto mapping = poolset::PoolMapping::open(set, 0);
    if (!mapping)
        return fail(
            std::move(mapping.error()).add_context("mapping the local pool of " + set.origin));
    // The size libpmemobj gives librpmem: the pool set's (the smallest local replica).
    std::size_t size =
        std::min<std::uint64_t>(set.pool_size().value_or(mapping->size()), mapping->size());
    if (size <= kReplicatedFrom)
        return fail(EINVAL, fmt::format("{}: the pool of {} bytes has nothing beyond its header",
                                        set.origin, size));
    mapping->will_read(kReplicatedFrom, size - kReplicatedFrom);
    const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(mapping->data()),
                                           size};
    auto fields = client::PmemobjLocalFields::of(bytes);
    return LocalPool{
        std::move(*mapping), {kReplicatedFrom, size - kReplicatedFrom}, std::move(fields)};
}

std::string replica_name(const poolset::ReplicaSpec& spec) {
    return fmt::format("{} {} (line {})", spec.remote->target.to_string(), spec.remote->set_path,
                       spec.line);
}

std::uint64_t total_length(const std::vector<client::Range>& ranges) {
    std::uint64_t total = 0;
    for (const client::Range& range : ranges)
        total += range.length;
    return total;
}

// The local pool's digests, computed in the background while the first replica connects and
// hashes its copy (the two reads overlap).
using LocalDigests = std::shared_future<Result<std::vector<std::uint64_t>>>;

// Compares (and with `repair` repairs) one remote replica against `local_digests`.
ReplicaOutcome check_replica(const poolset::ReplicaSpec& spec, const client::Settings& settings,
                             const LocalPool& local, const LocalDigests& local_digests,
                             const VerifyOptions& options, const ProgressDisplay& display) {
    ReplicaOutcome outcome{&spec, {}, {}, 0, false, {}, std::nullopt};
    const client::Range range = local.replicated;
    const std::span<std::byte> pool = local.bytes().first(range.offset + range.length);
    unsigned lanes = 1;
    // An inspection: no bringing up to date on open (that would hide what differs).
    auto replica = client::Replica::open(settings, spec.remote->target, spec.remote->set_path, pool,
                                         lanes, nullptr, false);
    if (!replica) {
        outcome.error = std::move(replica.error());
        return outcome;
    }
    client::ReplicaBytes replica_bytes{
        [&](std::span<std::byte> into, std::size_t offset) {
            return (*replica)->read(into, offset, 0);
        },
        [&](std::size_t offset, std::size_t length, std::size_t extent_size) {
            return (*replica)->digests(offset, length, extent_size);
        }};
    auto compare = [&]() -> Result<client::ConfirmedDifferences> {
        client::ProgressMeter progress("replica " + replica_name(spec) + ": comparing digests",
                                       range.length, display.interval, display.show);
        auto remote = (*replica)->digests(range.offset, range.length, options.extent_size,
                                          [&](std::uint64_t bytes) { progress.advance(bytes); });
        progress.finish();
        if (!remote)
            return fail(std::move(remote.error()));
        const auto& mine = local_digests.get();
        if (!mine)
            return fail(mine.error());
        const auto mismatches =
            client::differing_ranges(*mine, *remote, range, options.extent_size);
        return client::confirm_differences(pool, local.local_fields, mismatches,
                                           options.extent_size, replica_bytes);
    };
    auto found = compare();
    if (found) {
        outcome.differences = std::move(found->ranges);
        outcome.local_only = std::move(found->local_only);
        outcome.local_only_bytes = found->local_only_bytes;
        outcome.remaining = outcome.differences;
    } else {
        outcome.error = std::move(found.error());
    }
    // Proven direction (DESIGN.md, invariant 7): a repair copies the local pool over the
    // replica, so only a local pool proven to be the replica's master may do it.
    const client::MasterProof& proof = (*replica)->master_proof();
    if (!outcome.error && options.repair && !outcome.differences.empty() && !proof.proven())
        outcome.error = Error(EPERM, fmt::format("not repairing replica {}: {}; the replica may "
                                                 "be the last good copy (if the local pool was "
                                                 "lost: rpmemctl restore {})",
                                                 replica_name(spec), proof.reason, options.set));
    if (!outcome.error && options.repair && !outcome.differences.empty()) {
        client::ProgressMeter progress("replica " + replica_name(spec) + ": repairing",
                                       total_length(outcome.differences), display.interval,
                                       display.show);
        for (const client::Range& bad : outcome.differences) {
            auto written =
                (*replica)->persist(bad.offset, bad.length, 0, client::PersistMode::strict);
            if (!written) {
                outcome.error = std::move(written.error());
                break;
            }
            progress.advance(bad.length);
        }
        progress.finish();
        if (!outcome.error) {
            outcome.repaired = true;
            auto again = compare();
            if (again)
                outcome.remaining = std::move(again->ranges);
            else
                outcome.error = std::move(again.error());
        }
    }
    // Proven equal (or repaired to equal): rpmemd may call it consistent; else it is behind,
    // when this local pool is its master (an unproven one leaves its state as it was).
    if (!outcome.error && outcome.remaining.empty())
        (*replica)->mark_identical();
    else
        (*replica)->mark_behind();
    if (auto closed = (*replica)->close(); !closed && !outcome.error)
        outcome.error = std::move(closed.error());
    return outcome;
}

void print_ranges(const std::vector<client::Range>& ranges, std::ostream& out) {
    for (const client::Range& range : ranges)
        out << "  differs: offset " << range.offset << ", length " << range.length << "\n";
}

// "N bytes in M fields libpmemobj ... (kinds)", or empty when none differ.
std::string local_only_summary(const ReplicaOutcome& outcome) {
    if (outcome.local_only.empty())
        return {};
    std::vector<std::string_view> kinds;
    for (const auto& field : outcome.local_only) {
        auto kind = client::PmemobjLocalFields::describe(field.kind);
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
            kinds.push_back(kind);
    }
    return fmt::format("{} bytes that libpmemobj keeps only in its local mapping and never "
                       "replicates ({} {}: {})",
                       outcome.local_only_bytes, outcome.local_only.size(),
                       outcome.local_only.size() == 1 ? "field" : "fields", fmt::join(kinds, ", "));
}

void print_text(const VerifyOptions& options, const client::Range& range,
                const std::vector<ReplicaOutcome>& outcomes, std::ostream& out) {
    out << options.set << ": comparing " << range.length << " bytes from offset " << range.offset
        << " in extents of " << poolset::format_size(options.extent_size) << "\n";
    for (const ReplicaOutcome& outcome : outcomes) {
        out << "replica " << replica_name(*outcome.spec) << ": ";
        if (outcome.error) {
            out << "error: " << outcome.error->message() << "\n";
            continue;
        }
        const std::string local_only = local_only_summary(outcome);
        if (outcome.differences.empty()) {
            out << "identical\n";
            if (!local_only.empty())
                out << "  not compared: " << local_only << "\n";
            continue;
        }
        out << outcome.differences.size()
            << (outcome.differences.size() == 1 ? " range differs" : " ranges differ") << " ("
            << total_length(outcome.differences) << " bytes)\n";
        print_ranges(outcome.differences, out);
        if (!local_only.empty())
            out << "  not compared: " << local_only << "\n";
        if (!outcome.repaired)
            continue;
        out << "replica " << replica_name(*outcome.spec) << ": rewrote "
            << total_length(outcome.differences) << " bytes from the local pool; ";
        if (outcome.remaining.empty()) {
            out << "identical now\n";
        } else {
            out << outcome.remaining.size() << " still differ\n";
            print_ranges(outcome.remaining, out);
        }
    }
}

Json ranges_json(const std::vector<client::Range>& ranges) {
    Json json = Json::array();
    for (const client::Range& range : ranges)
        json.push_back({{"offset", range.offset}, {"length", range.length}});
    return json;
}

Json verify_json(const VerifyOptions& options, const client::Range& range,
                 const std::vector<ReplicaOutcome>& outcomes) {
    Json replicas = Json::array();
    for (const ReplicaOutcome& outcome : outcomes) {
        const poolset::RemoteReplica& remote = *outcome.spec->remote;
        Json replica = {
            {"line", outcome.spec->line},
            {"target", remote.target.to_string()},
            {"set", remote.set_path},
        };
        if (outcome.error)
            replica["error"] = outcome.error->message();
        replica["identical"] = !outcome.error && outcome.differences.empty();
        replica["differences"] = ranges_json(outcome.differences);
        // Left out by design, never a difference: libpmemobj does not replicate them.
        Json local_only = Json::array();
        for (const auto& field : outcome.local_only)
            local_only.push_back(
                {{"offset", field.range.offset},
                 {"length", field.range.length},
                 {"field", std::string(client::PmemobjLocalFields::describe(field.kind))}});
        replica["local_only"] = std::move(local_only);
        replica["local_only_bytes"] = outcome.local_only_bytes;
        if (options.repair) {
            replica["repaired"] = outcome.repaired;
            replica["remaining"] = ranges_json(outcome.remaining);
        }
        replicas.push_back(std::move(replica));
    }
    return {
        {"file", options.set},
        {"offset", range.offset},
        {"length", range.length},
        {"extent_size", options.extent_size},
        {"replicas", std::move(replicas)},
    };
}

void report_error(const VerifyOptions& options, const Error& error, std::ostream& out,
                  std::ostream& err) {
    if (options.json)
        out << json_text({{"file", options.set}, {"error", error.message()}}) << "\n";
    else
        err << "rpmemctl verify: " << error.message() << "\n";
}

int verify(const VerifyOptions& options, std::ostream& out, std::ostream& err) {
    auto set = load_set_file(options.set);
    if (!set) {
        report_error(options, set.error(), out, err);
        return kExitError;
    }
    auto local = map_local_pool(*set);
    if (!local) {
        report_error(options, local.error(), out, err);
        return kExitError;
    }
    auto settings = client::load_settings(client::process_environment());
    if (!settings) {
        report_error(options, settings.error(), out, err);
        return kExitError;
    }
    const client::Range range = local->replicated;
    const LocalDigests local_digests =
        std::async(std::launch::async, [&] {
            return client::local_digests(local->bytes(), range.offset, range.length,
                                         options.extent_size);
        }).share();

    // Progress on stderr: the results go to stdout.
    const ProgressDisplay display =
        ProgressDisplay::on(err, ::isatty(STDERR_FILENO) == 1, "rpmemctl verify: ");
    std::vector<ReplicaOutcome> outcomes;
    for (const poolset::ReplicaSpec& spec : set->replicas) {
        if (spec.is_remote())
            outcomes.push_back(
                check_replica(spec, *settings, *local, local_digests, options, display));
    }
    if (const auto& mine = local_digests.get(); !mine) {
        report_error(options, mine.error(), out, err);
        return kExitError;
    }
    if (options.json)
        out << json_text(verify_json(options, range, outcomes)) << "\n";
    else
        print_text(options, range, outcomes, out);

    int status = kExitOk;
    for (const ReplicaOutcome& outcome : outcomes) {
        if (outcome.error)
            return kExitError;
        if (!outcome.remaining.empty())
            status = kExitDifferent;
    }
    return status;
}

} // namespace

void add_verify_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "verify", "compare a pool with its remote replicas by digests, optionally repair them",
        "Compare the local pool of the pool set file SET with each remote replica its REPLICA\n"
        "lines name, by digests (XXH3-64) of extents of the replicated range (the pool without\n"
        "its first 4096 bytes, the header each side keeps for itself), and list the ranges that\n"
        "differ. The bytes libpmemobj keeps only in its local mapping and never replicates\n"
        "(the pool descriptor's run-time part, chunk footers, free-block tree entries, undo\n"
        "log extensions' generation numbers) are left out and counted apart. Run it on the\n"
        "initiator while no application has the pool open.",
        "Exit status: 0 every replica identical (after --repair: repaired), 1\n"
        "differences remain, 2 error (usage, pool set, local pool or a replica\n"
        "unreachable).",
        output, &verify);
    command->add_option("SET", options->set, "the local pool set file")->required();
    command->add_flag("--repair", options->repair,
                      "rewrite the differing ranges of each replica from the local pool, then "
                      "compare again");
    command
        ->add_option("--extent-size", options->extent_size,
                     "bytes per digest: a power of two from 4K to 64M (default 1M)")
        ->transform(byte_size())
        ->check(
            [](const std::string& text) {
                auto problem = protocol::check_digest_extent_size(std::stoull(text));
                return problem ? problem->reason : std::string();
            },
            "POWER OF TWO");
    command->add_flag("--json", options->json, "print the result as one JSON object");
}

} // namespace rpmem::tools
