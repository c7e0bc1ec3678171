// SPDX-License-Identifier: BSD-3-Clause
#include "pmdk_peer.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process_cpu.h"
#include "scratch_files.h"
#include "work_directory.h"

namespace rpmem::bench {

namespace fs = std::filesystem;

namespace {

// What crosses the pipe: the same binary on both ends, so plain copies of fixed layouts.
struct WireOutcome {
    int error = 0; // errno of the child's failure; 0: `rows` rows follow
    std::uint32_t rows = 0;
    char message[512] = {};
};
struct WireRow {
    char operation[48] = {};
    char wait[96] = {};
    LatencySummary latency;
    double seconds = 0;
    double mb_per_s = 0;
    double ops_per_s = 0;
    std::uint64_t transactions = 0;
    double client_cpu_s = 0;
    double daemon_cpu_s = 0;
};
static_assert(std::is_trivially_copyable_v<WireOutcome> && std::is_trivially_copyable_v<WireRow>);

template <std::size_t N>
void copy_text(char (&into)[N], const std::string& text) {
    const std::size_t length = std::min(text.size(), N - 1);
    std::memcpy(into, text.data(), length);
    into[length] = '\0';
}

// Moves all `length` bytes through `io` (::read or ::write), across short transfers and EINTR;
// false at the end of the stream or on an error.
template <typename Byte, typename Io>
bool transfer_all(int fd, Byte* bytes, std::size_t length, Io io) {
    while (length > 0) {
        const ssize_t n = io(fd, bytes, length);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        bytes += n;
        length -= static_cast<std::size_t>(n);
    }
    return true;
}

bool write_all(int fd, const void* data, std::size_t length) {
    return transfer_all(fd, static_cast<const char*>(data), length, ::write);
}

bool read_all(int fd, void* data, std::size_t length) {
    return transfer_all(fd, static_cast<char*>(data), length, ::read);
}

// The child's whole run: PMDK's environment, its librpmem loaded, then GPSPM and APM rows.
class PeerRun {
public:
    PeerRun(const PmdkPeer::Build& build, fs::path pool_dir, std::size_t pool_size,
            const PmdkPeer::Measure& measure)
        : build_(build)
        , pool_dir_(std::move(pool_dir))
        , pool_size_(pool_size)
        , measure_(measure) {}

    Result<std::vector<PmdkPeer::Row>> run() {
        auto work = WorkDirectory::make(pool_dir_, WorkDirectory::Cleanup::after_success);
        if (!work)
            return fail(std::move(work.error()));
        const fs::path dir = work->path();
        const fs::path remote = dir / "remote";
        std::error_code error;
        fs::create_directory(remote, error);
        if (error)
            return fail(error.value(), "creating " + remote.string() + ": " + error.message());
        // PMDK runs `$RPMEM_SSH [-p PORT] -T -oBatchMode=yes HOST "$RPMEM_CMD"`; this stand-in
        // for ssh runs the command here, with the SSH_CONNECTION rpmemd reads its address from.
        const fs::path ssh = dir / "ssh-here";
        if (auto written = write_text(ssh,
                                      "#!/bin/sh\n"
                                      "for last; do :; done\n"
                                      "export SSH_CONNECTION='127.0.0.1 40000 127.0.0.1 22'\n"
                                      "eval \"exec $last\"\n",
                                      0755);
            !written)
            return fail(std::move(written.error()));
        config_ = dir / "rpmemd.conf";
        // librpmem reads these once, when it is loaded.
        ::setenv("RPMEM_SSH", ssh.c_str(), 1);
        ::setenv("RPMEM_CMD",
                 fmt::format("{} -c {}", build_.rpmemd.string(), config_.string()).c_str(), 1);
        ::setenv("RPMEM_ENABLE_SOCKETS", "1", 1);
        ::setenv("RPMEM_ENABLE_VERBS", "0", 1);
        void* library = ::dlopen(build_.librpmem.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (library == nullptr)
            return fail(ELIBACC,
                        fmt::format("loading {}: {}", build_.librpmem.string(), ::dlerror()));

        std::vector<PmdkPeer::Row> rows;
        for (const bool apm : {false, true}) {
            auto row = run_method(dir, apm);
            if (!row)
                return fail(std::move(row.error()));
            rows.push_back(std::move(*row));
        }
        work->succeeded();
        return rows;
    }

private:
    Result<PmdkPeer::Row> run_method(const fs::path& dir, bool apm) {
        const std::string method = apm ? "apm" : "gpspm";
        if (auto written = write_text(
                config_, fmt::format("poolset-dir = {}\nlog-file = {}\nlog-level = notice\n"
                                     "persist-apm = {}\npersist-general = yes\n",
                                     (dir / "remote").string(),
                                     (dir / fmt::format("rpmemd-{}.log", method)).string(),
                                     apm ? "yes" : "no"));
            !written)
            return fail(std::move(written.error()));
        const std::string set = fmt::format("pmdk-{}.set", method);
        if (auto written = write_text(dir / "remote" / set,
                                      pool_set_text(pool_size_, dir / ("target-" + method), {}));
            !written)
            return fail(std::move(written.error()));
        const fs::path local = dir / set;
        if (auto written = write_text(
                local, pool_set_text(pool_size_, dir / ("local-" + method), {"127.0.0.1 " + set}));
            !written)
            return fail(std::move(written.error()));
        {
            auto created = WorkloadPool::create(local);
            if (!created)
                return fail(std::move(created.error()));
        }
        auto pool = WorkloadPool::open(local);
        if (!pool)
            return fail(std::move(pool.error()));
        // PMDK's rpmemd is this process's child while the pool is open.
        const double tree_before = process_tree_cpu_seconds(::getpid());
        const double self_before = process_cpu_seconds();
        const std::uint64_t committed = pool->committed();
        auto row = measure_("pmemobj-pmdk-" + method, *pool);
        if (!row)
            return fail(std::move(row.error()));
        const double tree_after = process_tree_cpu_seconds(::getpid());
        const double self_after = process_cpu_seconds();
        row->wait = fmt::format("PMDK 1.12.1 librpmem and rpmemd, {}, sockets",
                                apm ? "APM (persist-apm = yes)" : "GPSPM (its default)");
        return PmdkPeer::Row{
            .row = std::move(*row),
            .transactions = pool->committed() - committed,
            .client_cpu_s = self_after - self_before,
            .daemon_cpu_s = std::max(0.0, (tree_after - tree_before) - (self_after - self_before)),
        };
    }

    const PmdkPeer::Build& build_;
    fs::path pool_dir_;
    std::size_t pool_size_;
    const PmdkPeer::Measure& measure_;
    fs::path config_;
};

[[noreturn]] void run_child(const PmdkPeer::Build& build, const fs::path& pool_dir,
                            std::size_t pool_size, const PmdkPeer::Measure& measure, int go,
                            int out) {
    char byte = 0;
    if (!read_all(go, &byte, 1))
        ::_exit(0); // the parent went without asking
    WireOutcome outcome;
    std::vector<WireRow> wire;
    auto rows = PeerRun(build, pool_dir, pool_size, measure).run();
    if (!rows) {
        outcome.error = rows.error().errno_value() != 0 ? rows.error().errno_value() : EIO;
        copy_text(outcome.message, rows.error().message());
    } else {
        for (const PmdkPeer::Row& row : *rows) {
            WireRow& w = wire.emplace_back();
            copy_text(w.operation, row.row.operation);
            copy_text(w.wait, row.row.wait);
            w.latency = row.row.latency;
            w.seconds = row.row.seconds;
            w.mb_per_s = row.row.mb_per_s;
            w.ops_per_s = row.row.ops_per_s;
            w.transactions = row.transactions;
            w.client_cpu_s = row.client_cpu_s;
            w.daemon_cpu_s = row.daemon_cpu_s;
        }
        outcome.rows = static_cast<std::uint32_t>(wire.size());
    }
    const bool sent = write_all(out, &outcome, sizeof outcome) &&
                      write_all(out, wire.data(), wire.size() * sizeof(WireRow));
    // No destructors or atexit handlers of the parent's copy: libraries, pools and the
    // scratch directory are this process's own and already closed.
    ::_exit(sent ? 0 : 1);
}

} // namespace

Result<PmdkPeer::Build> PmdkPeer::Build::in(const fs::path& tree) {
    Build build{tree / "src" / "nondebug" / "librpmem.so.1",
                tree / "src" / "tools" / "rpmemd" / "rpmemd"};
    for (const fs::path& file : {build.librpmem, build.rpmemd})
        if (::access(file.c_str(), R_OK) != 0)
            return fail(ENOENT,
                        fmt::format("{} is not a PMDK 1.12 build tree: no {} (in its src: make "
                                    "librpmem libpmem common core; make -C tools rpmemd)",
                                    tree.string(), file.string()));
    return build;
}

Result<PmdkPeer> PmdkPeer::fork(Build build, fs::path pool_dir, std::size_t pool_size,
                                Measure measure) {
    int go[2], rows[2];
    if (::pipe2(go, O_CLOEXEC) != 0)
        return fail(Error::from_errno(errno, "creating the PMDK peer's pipe"));
    UniqueFd go_read(go[0]), go_write(go[1]);
    if (::pipe2(rows, O_CLOEXEC) != 0)
        return fail(Error::from_errno(errno, "creating the PMDK peer's pipe"));
    UniqueFd rows_read(rows[0]), rows_write(rows[1]);
    const pid_t child = ::fork();
    if (child < 0)
        return fail(Error::from_errno(errno, "forking the PMDK peer"));
    if (child == 0) {
        go_write.reset();
        rows_read.reset();
        run_child(build, pool_dir, pool_size, measure, go_read.get(), rows_write.get());
    }
    return PmdkPeer(std::move(build), child, std::move(go_write), std::move(rows_read));
}

PmdkPeer::PmdkPeer(Build build, pid_t child, UniqueFd go, UniqueFd rows) noexcept
    : build_(std::move(build))
    , child_(child)
    , go_(std::move(go))
    , rows_(std::move(rows)) {}

PmdkPeer::PmdkPeer(PmdkPeer&& other) noexcept
    : build_(std::move(other.build_))
    , child_(std::exchange(other.child_, -1))
    , go_(std::move(other.go_))
    , rows_(std::move(other.rows_)) {}

PmdkPeer::~PmdkPeer() {
    reap(true);
}

void PmdkPeer::reap(bool kill) noexcept {
    if (child_ <= 0)
        return;
    go_.reset(); // a child still waiting reads the end and leaves
    if (kill)
        ::kill(child_, SIGTERM);
    int status = 0;
    while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    child_ = -1;
}

Result<std::vector<PmdkPeer::Row>> PmdkPeer::measure() {
    if (child_ <= 0)
        return fail(ECHILD, "the PMDK peer was measured already");
    const char run = 'r';
    WireOutcome outcome;
    if (!write_all(go_.get(), &run, 1) || !read_all(rows_.get(), &outcome, sizeof outcome)) {
        reap(true);
        return fail(EIO, "the PMDK peer's process ended without an answer");
    }
    std::vector<WireRow> wire(outcome.rows);
    const bool complete = read_all(rows_.get(), wire.data(), wire.size() * sizeof(WireRow));
    reap(false);
    if (outcome.error != 0)
        return fail(outcome.error, fmt::format("PMDK peer: {}", outcome.message));
    if (!complete)
        return fail(EIO, "the PMDK peer's rows were cut short");
    std::vector<Row> rows;
    for (const WireRow& w : wire) {
        Row& row = rows.emplace_back();
        row.row.operation = w.operation;
        row.row.wait = w.wait;
        row.row.size = 64;
        row.row.lanes = 1;
        row.row.latency = w.latency;
        row.row.seconds = w.seconds;
        row.row.mb_per_s = w.mb_per_s;
        row.row.ops_per_s = w.ops_per_s;
        row.transactions = w.transactions;
        row.client_cpu_s = w.client_cpu_s;
        row.daemon_cpu_s = w.daemon_cpu_s;
    }
    return rows;
}

} // namespace rpmem::bench
