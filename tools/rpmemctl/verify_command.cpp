// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl verify SET [--repair] [--extent-size N] [--json]`: on the initiator, while the pool
// is not open elsewhere, compares the local pool of the pool set file SET with each of its
// remote replicas (`REPLICA [user@]host[:port] remote.set` lines) by per-extent digests, lists
// the ranges that differ and, with --repair, rewrites them from the local pool.
//
// What is compared is what replication writes: like libpmemobj, which hands librpmem its master
// replica from the pool's first byte with the pool set's size, offsets are the same on both
// sides, and the first 4096 bytes (each side's own pool header) are left out.
#include <cerrno>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "client/extent_digest.h"
#include "client/replica.h"
#include "client/settings.h"
#include "command.h"
#include "json_writer.h"
#include "poolset/parser.h"
#include "poolset/pool_mapping.h"
#include "poolset/pool_set.h"
#include "protocol/request.h"
#include "set_file.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kUsage =
    "usage: rpmemctl verify SET [--repair] [--extent-size N] [--json]\n"
    "\n"
    "Compares the local pool of the pool set file SET with each remote replica its REPLICA\n"
    "lines name, by digests (XXH3-64) of extents of the replicated range (the pool without its\n"
    "first 4096 bytes, the header each side keeps for itself), and lists the ranges that\n"
    "differ. Run it on the initiator while no application has the pool open.\n"
    "\n"
    "  --repair          rewrite the differing ranges of each replica from the local pool,\n"
    "                    then compare again\n"
    "  --extent-size N   bytes per digest: a power of two from 4K to 64M (default 1M)\n"
    "  --json            print the result as one JSON object\n"
    "\n"
    "Exit status: 0 every replica identical (after --repair: repaired), 1 differences remain,\n"
    "2 error (usage, pool set, local pool or a replica unreachable).\n";

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
    bool repaired = false;                  // --repair rewrote the differences
    std::vector<client::Range> remaining;   // differences after the repair
    std::optional<Error> error;
};

std::optional<VerifyOptions> parse(std::span<const std::string_view> args, std::ostream& err) {
    VerifyOptions options;
    bool have_set = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        if (arg == "--repair") {
            options.repair = true;
        } else if (arg == "--json") {
            options.json = true;
        } else if (arg == "--extent-size") {
            if (i + 1 == args.size()) {
                err << "rpmemctl verify: --extent-size needs a value\n";
                return std::nullopt;
            }
            auto size = poolset::parse_size(args[++i]);
            if (!size) {
                err << "rpmemctl verify: --extent-size: " << size.error().message() << "\n";
                return std::nullopt;
            }
            if (auto problem = protocol::check_digest_extent_size(*size)) {
                err << "rpmemctl verify: --extent-size: " << problem->reason << "\n";
                return std::nullopt;
            }
            options.extent_size = static_cast<std::size_t>(*size);
        } else if (arg.size() > 1 && arg.front() == '-') {
            err << "rpmemctl verify: unknown option '" << arg << "'\n";
            return std::nullopt;
        } else if (!have_set) {
            options.set = std::string(arg);
            have_set = true;
        } else {
            err << "rpmemctl verify: more than one SET given\n";
            return std::nullopt;
        }
    }
    if (!have_set) {
        err << "rpmemctl verify: missing SET\n";
        return std::nullopt;
    }
    return options;
}

// The local pool: replica 0 of the set, mapped (and locked against other users) as libpmemobj
// maps it, and the range replication writes.
struct LocalPool {
    poolset::PoolMapping mapping;
    client::Range replicated;

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
    return LocalPool{std::move(*mapping), {kReplicatedFrom, size - kReplicatedFrom}};
}

std::string replica_name(const poolset::ReplicaSpec& spec) {
    return fmt::format("{} {} (line {})", spec.remote->target.to_string(), spec.remote->set_path,
                       spec.line);
}

// The local pool's digests, computed in the background while the first replica connects and
// hashes its copy (the two reads overlap).
using LocalDigests = std::shared_future<Result<std::vector<std::uint64_t>>>;

// Compares (and with `repair` repairs) one remote replica against `local_digests`.
ReplicaOutcome check_replica(const poolset::ReplicaSpec& spec, const client::Settings& settings,
                             const LocalPool& local, const LocalDigests& local_digests,
                             const VerifyOptions& options) {
    ReplicaOutcome outcome{&spec, {}, false, {}, std::nullopt};
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
    auto compare = [&]() -> Result<std::vector<client::Range>> {
        auto remote = (*replica)->digests(range.offset, range.length, options.extent_size);
        if (!remote)
            return fail(std::move(remote.error()));
        const auto& mine = local_digests.get();
        if (!mine)
            return fail(mine.error());
        return client::differing_ranges(*mine, *remote, range, options.extent_size);
    };
    auto found = compare();
    if (found) {
        outcome.differences = std::move(*found);
        outcome.remaining = outcome.differences;
    } else {
        outcome.error = std::move(found.error());
    }
    if (!outcome.error && options.repair && !outcome.differences.empty()) {
        for (const client::Range& bad : outcome.differences) {
            auto written =
                (*replica)->persist(bad.offset, bad.length, 0, client::PersistMode::strict);
            if (!written) {
                outcome.error = std::move(written.error());
                break;
            }
        }
        if (!outcome.error) {
            outcome.repaired = true;
            auto again = compare();
            if (again)
                outcome.remaining = std::move(*again);
            else
                outcome.error = std::move(again.error());
        }
    }
    // Proven equal (or repaired to equal): rpmemd may call it consistent; else it is behind.
    if (outcome.error || !outcome.remaining.empty())
        (*replica)->mark_behind();
    if (auto closed = (*replica)->close(); !closed && !outcome.error)
        outcome.error = std::move(closed.error());
    return outcome;
}

std::uint64_t total_length(const std::vector<client::Range>& ranges) {
    std::uint64_t total = 0;
    for (const client::Range& range : ranges)
        total += range.length;
    return total;
}

void print_ranges(const std::vector<client::Range>& ranges, std::ostream& out) {
    for (const client::Range& range : ranges)
        out << "  differs: offset " << range.offset << ", length " << range.length << "\n";
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
        if (outcome.differences.empty()) {
            out << "identical\n";
            continue;
        }
        out << outcome.differences.size()
            << (outcome.differences.size() == 1 ? " range differs" : " ranges differ") << " ("
            << total_length(outcome.differences) << " bytes)\n";
        print_ranges(outcome.differences, out);
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

void write_ranges(JsonWriter& json, const std::vector<client::Range>& ranges) {
    json.begin_array();
    for (const client::Range& range : ranges) {
        json.begin_object();
        json.key("offset").value(std::uint64_t{range.offset});
        json.key("length").value(std::uint64_t{range.length});
        json.end_object();
    }
    json.end_array();
}

std::string render_json(const VerifyOptions& options, const client::Range& range,
                        const std::vector<ReplicaOutcome>& outcomes) {
    JsonWriter json;
    json.begin_object();
    json.key("file").value(options.set);
    json.key("offset").value(std::uint64_t{range.offset});
    json.key("length").value(std::uint64_t{range.length});
    json.key("extent_size").value(std::uint64_t{options.extent_size});
    json.key("replicas").begin_array();
    for (const ReplicaOutcome& outcome : outcomes) {
        const poolset::RemoteReplica& remote = *outcome.spec->remote;
        json.begin_object();
        json.key("line").value(std::uint64_t{outcome.spec->line});
        json.key("target").value(remote.target.to_string());
        json.key("set").value(remote.set_path);
        if (outcome.error)
            json.key("error").value(outcome.error->message());
        json.key("identical").value(!outcome.error && outcome.differences.empty());
        json.key("differences");
        write_ranges(json, outcome.differences);
        if (options.repair) {
            json.key("repaired").value(outcome.repaired);
            json.key("remaining");
            write_ranges(json, outcome.remaining);
        }
        json.end_object();
    }
    json.end_array();
    json.end_object();
    return json.text();
}

void report_error(const VerifyOptions& options, const Error& error, std::ostream& out,
                  std::ostream& err) {
    if (!options.json) {
        err << "rpmemctl verify: " << error.message() << "\n";
        return;
    }
    JsonWriter json;
    json.begin_object();
    json.key("file").value(options.set);
    json.key("error").value(error.message());
    json.end_object();
    out << json.text() << "\n";
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

    std::vector<ReplicaOutcome> outcomes;
    for (const poolset::ReplicaSpec& spec : set->replicas) {
        if (spec.is_remote())
            outcomes.push_back(check_replica(spec, *settings, *local, local_digests, options));
    }
    if (const auto& mine = local_digests.get(); !mine) {
        report_error(options, mine.error(), out, err);
        return kExitError;
    }
    if (options.json)
        out << render_json(options, range, outcomes) << "\n";
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

int run_verify_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
    return run_parsed(args, kUsage, out, err, parse,
                      [&](const VerifyOptions& options) { return verify(options, out, err); });
}

} // namespace rpmem::tools
