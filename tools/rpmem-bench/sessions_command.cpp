// SPDX-License-Identifier: BSD-3-Clause
// `rpmem-bench sessions`: what many concurrent sessions on one rpmemd cost the one that is
// measured. A real rpmemd on loopback serves --count sessions: one measured session in this
// process, the others opened by up to --processes forked client processes, each of which
// persists 64 B on each of its sessions --rate times a second (spread evenly over the period).
// The measured session's persist latency is taken first alone (no other session open yet),
// then under that load, in the same run; the figure is the ratio of the two p99s. rpmemd's
// resident memory, descriptors and threads are reported for the supervisor and for its workers
// summed, in all and per session, and the daemon's CPU time per persist alone and under load.
// With --identities K the sessions belong to K client identities (load process p to identity
// p mod K, the measured session to the first), so K workers serve them instead of one.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/page_buffer.h"
#include "bench_options.h"
#include "channel/credentials.h"
#include "client/replica.h"
#include "command.h"
#include "process_usage.h"
#include "result_report.h"
#include "rpmemd_process.h"
#include "work_directory.h"

namespace rpmem::bench {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kPoolSize = 2u << 20; // one 2 MiB part per pool
constexpr std::size_t kOffset = 8192;       // where the 64 B go
constexpr std::size_t kPersistSize = 64;

struct SessionsOptions {
    std::size_t count = 256;
    std::size_t processes = 16;
    std::size_t rate = 100;     // persists per second per load session
    std::size_t identities = 1; // client identities the sessions are spread over
    double duration = 3.0;      // seconds per measured phase
    std::string responder_spin; // rpmemd's responder-spin; empty: its default
    std::string nthreads;       // rpmemd's nthreads; empty: its default
    std::string provider = "tcp";
    std::string pool_dir = "/dev/shm";
    fs::path rpmemd;
    OutputOptions output;
};

// One session's local pool and its replica.
struct Session {
    std::string set;
    PageBuffer memory;
    std::unique_ptr<client::Replica> replica;

    Result<void> open(const client::Settings& settings, std::uint16_t port) {
        auto allocated = PageBuffer::allocate(kPoolSize);
        if (!allocated)
            return fail(std::move(allocated.error()).add_context("a local pool"));
        memory = std::move(*allocated);
        unsigned lanes = 1;
        auto made = client::Replica::create(settings, Target{"", "127.0.0.1", port}, set,
                                            {memory.data(), kPoolSize}, lanes, nullptr);
        if (!made)
            return fail(std::move(made.error()).add_context(set));
        replica = std::move(*made);
        return {};
    }

    Result<void> persist(std::uint64_t stamp) {
        std::memcpy(memory.data() + kOffset, &stamp, sizeof stamp);
        return replica->persist(kOffset, kPersistSize, 0, client::PersistMode::strict);
    }
};

// The pipes between this process and one load process: commands one way ('o' open, 'g' go,
// 's' stop), answers the other ('r' ready or 'f' failed; at the end the persists done and the
// CPU seconds used while loading).
struct LoadChild {
    pid_t pid = -1;
    int command = -1;
    int answer = -1;
};

struct LoadResult {
    std::uint64_t persists = 0;
    double seconds = 0; // from go to stop
    double cpu_seconds = 0;
    std::uint32_t failures = 0;
};

// Moves all `size` bytes with `op` (::read or ::write), retrying short transfers and EINTR;
// false at end of file or on an error.
template <typename Op, typename Byte>
bool transfer_exact(Op op, int fd, Byte* bytes, std::size_t size) {
    while (size > 0) {
        const ssize_t n = op(fd, bytes, size);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return false;
        }
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

bool read_exact(int fd, void* data, std::size_t size) {
    return transfer_exact(::read, fd, static_cast<char*>(data), size);
}

bool write_exact(int fd, const void* data, std::size_t size) {
    return transfer_exact(::write, fd, static_cast<const char*>(data), size);
}

double cpu_seconds_of_self() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The body of a load process: opens its sessions when told, then persists on each of them
// `rate` times a second, spread over the period, until told to stop.
[[noreturn]] void run_load_process(std::vector<Session> sessions, const client::Settings& settings,
                                   std::uint16_t port, std::size_t rate, int command, int answer) {
    char byte = 0;
    if (!read_exact(command, &byte, 1) || byte != 'o')
        std::_Exit(1);
    for (Session& session : sessions) {
        if (auto opened = session.open(settings, port); !opened) {
            const std::string message = opened.error().message();
            (void)write_exact(answer, "f", 1);
            const auto length = static_cast<std::uint32_t>(message.size());
            (void)write_exact(answer, &length, sizeof length);
            (void)write_exact(answer, message.data(), message.size());
            std::_Exit(1);
        }
    }
    if (!write_exact(answer, "r", 1) || !read_exact(command, &byte, 1) || byte != 'g')
        std::_Exit(1);

    const double cpu_before = cpu_seconds_of_self();
    const auto started = Clock::now();
    const auto period = std::chrono::nanoseconds(1'000'000'000 / rate);
    const auto step = period / static_cast<long>(std::max<std::size_t>(1, sessions.size()));
    LoadResult result;
    auto next = Clock::now();
    for (std::uint64_t round = 1;; ++round) {
        for (Session& session : sessions) {
            next += step;
            std::this_thread::sleep_until(next);
            if (auto persisted = session.persist(round); persisted)
                ++result.persists;
            else
                ++result.failures;
        }
        pollfd stop{command, POLLIN, 0};
        if (::poll(&stop, 1, 0) > 0)
            break;
        if (Clock::now() > next + period) // fell behind: do not burst to catch up
            next = Clock::now();
    }
    result.cpu_seconds = cpu_seconds_of_self() - cpu_before;
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    (void)write_exact(answer, &result, sizeof result);
    for (Session& session : sessions)
        (void)session.replica->close();
    std::_Exit(0);
}

// A CA, rpmemd's certificate and one client certificate per identity ("rpmem-bench-K"),
// written under `directory`; the CredentialFiles name the first identity's, `clients` all.
struct IdentityCredentials {
    channel::CredentialFiles files;
    std::vector<std::pair<std::string, std::string>> clients; // certificate, key
};

Result<IdentityCredentials> write_identity_credentials(const fs::path& directory,
                                                       std::size_t identities) {
    std::error_code error;
    fs::create_directories(directory, error);
    if (error)
        return fail(Error::from_errno(error.value(), "creating " + directory.string()));
    const auto validity = channel::Validity::days_from_now(1);
    auto ca = channel::make_certificate_authority("rpmem-bench CA", validity);
    if (!ca)
        return fail(std::move(ca.error()));
    const std::string names[] = {"localhost", "127.0.0.1"};
    auto server = channel::make_server_certificate(*ca, names, validity);
    if (!server)
        return fail(std::move(server.error()));
    IdentityCredentials made;
    made.files.ca_certificate = directory / "ca.crt";
    made.files.server_certificate = directory / "server.crt";
    made.files.server_key = directory / "server.key";
    if (auto written = ca->write_certificate(made.files.ca_certificate, true); !written)
        return fail(std::move(written.error()));
    if (auto written = server->write(made.files.server_certificate, made.files.server_key, true);
        !written)
        return fail(std::move(written.error()));
    for (std::size_t k = 0; k < identities; ++k) {
        const std::string identity = fmt::format("rpmem-bench-{}", k);
        auto client = channel::make_client_certificate(*ca, identity, validity);
        if (!client)
            return fail(std::move(client.error()));
        const fs::path certificate = directory / (identity + ".crt");
        const fs::path key = directory / (identity + ".key");
        if (auto written = client->write(certificate, key, true); !written)
            return fail(std::move(written.error()));
        made.clients.emplace_back(certificate.string(), key.string());
    }
    made.files.client_certificate = made.clients.front().first;
    made.files.client_key = made.clients.front().second;
    return made;
}

struct PhaseFigures {
    std::vector<std::uint64_t> samples_ns;
    double seconds = 0;
};

class SessionsBench {
public:
    explicit SessionsBench(const SessionsOptions& options)
        : options_(options) {}

    ~SessionsBench() {
        for (LoadChild& child : children_) {
            if (child.command >= 0)
                ::close(child.command);
            if (child.answer >= 0)
                ::close(child.answer);
            if (child.pid > 0) {
                int status = 0;
                if (::waitpid(child.pid, &status, WNOHANG) == 0) {
                    ::kill(child.pid, SIGKILL);
                    ::waitpid(child.pid, &status, 0);
                }
            }
        }
    }

    Result<void> run(Report& report) {
        auto work = WorkDirectory::make(options_.pool_dir, WorkDirectory::Cleanup::after_success);
        if (!work)
            return fail(std::move(work.error()));
        work_.emplace(std::move(*work));
        const fs::path dir = work_->path();
        const std::size_t others = options_.count - 1;
        std::vector<std::string> config{
            fmt::format("max-sessions = {}", options_.count + 8),
            fmt::format("max-sessions-per-client = {}", options_.count + 8), "log-level = notice"};
        if (!options_.responder_spin.empty())
            config.push_back("responder-spin = " + options_.responder_spin);
        if (!options_.nthreads.empty())
            config.push_back("nthreads = " + options_.nthreads);
        report.context.emplace_back(
            "rpmemd config",
            fmt::format("responder-spin {}, nthreads {}",
                        options_.responder_spin.empty() ? "default" : options_.responder_spin,
                        options_.nthreads.empty() ? "default" : options_.nthreads));
        auto credentials = write_identity_credentials(dir / "tls", options_.identities);
        if (!credentials)
            return fail(std::move(credentials.error()).add_context("making the certificates"));
        auto rpmemd =
            RpmemdProcess::start(options_.rpmemd, dir / "rpmemd", config, &credentials->files);
        if (!rpmemd)
            return fail(std::move(rpmemd.error()));
        rpmemd_ = std::move(*rpmemd);
        report.context.emplace_back("rpmemd", fmt::format("{} on 127.0.0.1:{}, log {}",
                                                          options_.rpmemd.string(), rpmemd_->port(),
                                                          rpmemd_->log_file().string()));
        std::vector<Session> sessions(options_.count);
        for (std::size_t i = 0; i < sessions.size(); ++i) {
            sessions[i].set = fmt::format("s{}.set", i);
            std::ofstream out(rpmemd_->poolset_dir() / sessions[i].set);
            out << fmt::format("PMEMPOOLSET\nOPTION NOHDRS\n{} {}\n", kPoolSize,
                               (dir / fmt::format("s{}.part0", i)).string());
            if (!out)
                return fail(EIO, "writing a pool set");
        }
        client::Settings settings;
        const channel::CredentialFiles& tls = rpmemd_->credentials();
        settings.tls_ca = tls.ca_certificate.string();
        settings.tls_cert = tls.client_certificate.string();
        settings.tls_key = tls.client_key.string();
        settings.provider = options_.provider;
        settings.enable_sockets = options_.provider == "sockets";
        settings.connect_timeout = std::chrono::seconds(60);
        settings.timeout = std::chrono::seconds(60);
        settings.log_level = "warning";
        settings.log_file = (dir / "librpmem.log").string();

        // Fork the load processes while this one has no thread but the main one.
        const std::size_t processes =
            std::min(options_.processes, std::max<std::size_t>(others, 1));
        if (others > 0) {
            for (std::size_t p = 0; p < processes; ++p) {
                std::vector<Session> share;
                for (std::size_t i = 1 + p; i < sessions.size(); i += processes)
                    share.push_back(Session{sessions[i].set, {}, nullptr});
                int command[2], answer[2];
                if (::pipe2(command, O_CLOEXEC) != 0 || ::pipe2(answer, O_CLOEXEC) != 0)
                    return fail(Error::from_errno(errno, "creating a load process's pipes"));
                const pid_t pid = ::fork();
                if (pid < 0)
                    return fail(Error::from_errno(errno, "forking a load process"));
                if (pid == 0) {
                    ::close(command[1]);
                    ::close(answer[0]);
                    client::Settings own = settings;
                    const auto& [certificate, key] =
                        credentials->clients[p % credentials->clients.size()];
                    own.tls_cert = certificate;
                    own.tls_key = key;
                    run_load_process(std::move(share), own, rpmemd_->port(), options_.rate,
                                     command[0], answer[1]);
                }
                ::close(command[0]);
                ::close(answer[1]);
                children_.push_back(LoadChild{pid, command[1], answer[0]});
            }
        }

        Session& measured = sessions.front();
        measured_ = &measured;
        if (auto opened = measured.open(settings, rpmemd_->port()); !opened)
            return opened;
        const DaemonUsage one = daemon_usage();
        auto alone = measure();
        if (!alone)
            return fail(std::move(alone.error()).add_context("the session alone"));
        const double alone_cpu_us =
            (daemon_usage().total().cpu_seconds - one.total().cpu_seconds) * 1e6 /
            std::max<double>(1.0, static_cast<double>(alone->samples_ns.size()));

        if (auto ready = tell_all('o'); !ready)
            return ready;
        for (LoadChild& child : children_) {
            char byte = 0;
            if (!read_exact(child.answer, &byte, 1))
                return fail(EIO, "a load process ended while opening its sessions");
            if (byte == 'f') {
                std::uint32_t length = 0;
                std::string message;
                if (read_exact(child.answer, &length, sizeof length)) {
                    message.resize(std::min<std::uint32_t>(length, 4096));
                    (void)read_exact(child.answer, message.data(), message.size());
                }
                return fail(EIO, "a load process could not open its sessions: " + message);
            }
        }
        const DaemonUsage all = daemon_usage();
        if (auto go = tell_all('g'); !go)
            return go;
        std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the load settles
        const ProcessUsage before = usage_with_children(rpmemd_->pid());
        const auto loaded_start = Clock::now();
        auto loaded = measure();
        if (!loaded)
            return fail(std::move(loaded.error()).add_context("the session under load"));
        const ProcessUsage after = usage_with_children(rpmemd_->pid());
        const double loaded_seconds =
            std::chrono::duration<double>(Clock::now() - loaded_start).count();
        if (auto stop = tell_all('s'); !stop)
            return stop;
        LoadResult load;
        double load_rate = 0; // persists per second, summed over the processes
        for (LoadChild& child : children_) {
            LoadResult one_child;
            if (!read_exact(child.answer, &one_child, sizeof one_child))
                return fail(EIO, "a load process ended before reporting");
            load.persists += one_child.persists;
            load_rate += static_cast<double>(one_child.persists) / one_child.seconds;
            load.failures += one_child.failures;
            load.cpu_seconds += one_child.cpu_seconds;
        }
        auto closed = measured.replica->close();
        if (!closed)
            return closed;
        for (LoadChild& child : children_) {
            int status = 0;
            ::waitpid(child.pid, &status, 0);
            child.pid = -1;
        }
        if (load.failures > 0)
            return fail(EIO, fmt::format("{} persists of the load failed", load.failures));

        add_rows(report, *alone, *loaded);
        const double session_count = static_cast<double>(options_.count);
        const ProcessUsage total = all.total();
        report.context.emplace_back(
            "rpmemd per session",
            fmt::format("{:.0f} KiB RSS, {:.2f} fds, {:.3f} threads (supervisor and workers, "
                        "{} sessions, {} identities)",
                        static_cast<double>(total.rss_kib) / session_count,
                        static_cast<double>(total.fds) / session_count,
                        static_cast<double>(total.threads) / session_count, options_.count,
                        options_.identities));
        report.context.emplace_back(fmt::format("rpmemd with {} sessions", options_.count),
                                    all.describe());
        report.context.emplace_back("rpmemd with 1 session", one.describe());
        const double measured_count = static_cast<double>(loaded->samples_ns.size());
        const double total_persists = load_rate * loaded_seconds + measured_count;
        report.context.emplace_back(
            "load",
            fmt::format("{} sessions in {} processes, {:.0f} persists/s in all "
                        "(asked {} each, {} in all)",
                        others, processes, load_rate, options_.rate, others * options_.rate));
        const double loaded_cpu_us =
            (after.cpu_seconds - before.cpu_seconds) * 1e6 / total_persists;
        report.context.emplace_back(
            "cpu per persist under load",
            fmt::format("rpmemd {:.1f} us, load clients {:.1f} us (user + system)", loaded_cpu_us,
                        load.cpu_seconds * 1e6 /
                            std::max(1.0, static_cast<double>(load.persists))));
        report.context.emplace_back(
            "rpmemd cpu per persist, loaded / alone",
            fmt::format("{:.2f} ({:.1f} us with {} sessions / {:.1f} us with the measured one "
                        "alone, back to back)",
                        loaded_cpu_us / std::max(alone_cpu_us, 1e-3), loaded_cpu_us, options_.count,
                        alone_cpu_us));
        work_->succeeded();
        return {};
    }

private:
    // rpmemd's supervisor and its workers, apart.
    struct DaemonUsage {
        ProcessUsage supervisor;
        ProcessUsage workers; // summed
        std::size_t worker_count = 0;

        ProcessUsage total() const {
            ProcessUsage sum = supervisor;
            sum += workers;
            return sum;
        }
        std::string describe() const {
            return fmt::format("supervisor {} KiB RSS, {} fds, {} threads; {} workers {} KiB, {} "
                               "fds, {} threads",
                               supervisor.rss_kib, supervisor.fds, supervisor.threads, worker_count,
                               workers.rss_kib, workers.fds, workers.threads);
        }
    };

    DaemonUsage daemon_usage() const {
        DaemonUsage usage;
        usage.supervisor = ProcessUsage::of(rpmemd_->pid());
        for (pid_t worker : children_of(rpmemd_->pid())) {
            usage.workers += ProcessUsage::of(worker);
            ++usage.worker_count;
        }
        return usage;
    }

    Result<void> tell_all(char command) {
        for (LoadChild& child : children_)
            if (!write_exact(child.command, &command, 1))
                return fail(EIO, "a load process ended early");
        return {};
    }

    // The measured session's strict 64 B persists, back to back, for the phase's duration.
    Result<PhaseFigures> measure() {
        PhaseFigures figures;
        Session& measured = *measured_;
        const auto start = Clock::now();
        const auto end = start + std::chrono::duration<double>(options_.duration);
        std::uint64_t stamp = 0;
        for (auto now = start; now < end;) {
            auto persisted = measured.persist(++stamp);
            const auto done = Clock::now();
            if (!persisted)
                return fail(std::move(persisted.error()));
            figures.samples_ns.push_back(static_cast<std::uint64_t>((done - now).count()));
            now = done;
        }
        figures.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return figures;
    }

    void add_rows(Report& report, PhaseFigures& alone, PhaseFigures& loaded) {
        ResultRow row;
        row.operation = "alone";
        row.size = kPersistSize;
        row.lanes = 1;
        row.wait = "client default";
        row.summarise(alone.samples_ns, alone.seconds, kPersistSize);
        ResultRow loaded_row = row;
        loaded_row.operation = "loaded";
        loaded_row.summarise(loaded.samples_ns, loaded.seconds, kPersistSize);
        report.context.emplace_back(
            "p99 loaded / alone",
            fmt::format("{:.2f} ({:.1f} us / {:.1f} us); p50 {:.2f} ({:.1f} us / {:.1f} us)",
                        loaded_row.latency.p99_us / row.latency.p99_us, loaded_row.latency.p99_us,
                        row.latency.p99_us, loaded_row.latency.p50_us / row.latency.p50_us,
                        loaded_row.latency.p50_us, row.latency.p50_us));
        report.rows.push_back(row);
        report.rows.push_back(loaded_row);
    }

    const SessionsOptions& options_;
    std::optional<WorkDirectory> work_;
    std::unique_ptr<RpmemdProcess> rpmemd_;
    std::vector<LoadChild> children_;
    Session* measured_ = nullptr;
};

int run_sessions(const SessionsOptions& given, std::ostream& out, std::ostream& err) {
    SessionsOptions options = given;
    if (options.rpmemd.empty())
        options.rpmemd = sibling_in_build_tree("rpmemd/rpmemd", "rpmemd");
    Report report;
    report.benchmark = "sessions";
    report.context = {
        {"provider", options.provider},
        {"cpus", std::to_string(std::thread::hardware_concurrency())},
        {"measured", "one session, strict 64 B persists back to back, client default wait"},
        {"PMEM_IS_PMEM_FORCE", std::getenv("PMEM_IS_PMEM_FORCE") != nullptr
                                   ? std::getenv("PMEM_IS_PMEM_FORCE")
                                   : "unset"},
    };
    {
        SessionsBench bench(options);
        if (auto measured = bench.run(report); !measured) {
            fmt::print(err, "rpmem-bench sessions: {}\n", measured.error().message());
            return kExitFailure;
        }
    }
    return write_report(report, options.output, "rpmem-bench sessions", out, err);
}

} // namespace

void add_sessions_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "sessions", "one session's persist latency among many loaded ones, against it alone",
        "One session's persist latency while many others on the same rpmemd persist at a steady\n"
        "rate, against the same session alone, in one run on loopback. A real rpmemd (one client\n"
        "identity, so one worker, unless --identities) serves COUNT sessions: the measured one in "
        "this process,\n"
        "persisting 64 B back to back, and COUNT-1 opened by forked client processes, each of\n"
        "which persists 64 B on each of its sessions RATE times a second. Rows: alone, loaded\n"
        "(64 B strict persists of the measured session). The context gives the p99 ratio,\n"
        "rpmemd's (with its workers) resident memory, descriptors and threads per session, and\n"
        "CPU per persist under load.",
        kPoolFooter, output, &run_sessions);
    command->add_option("--count", options->count, "sessions in all (default 256)")
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--processes", options->processes,
                     "client processes for the other sessions, at most (default 16)")
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--rate", options->rate,
                     "persists per second of each other session (default 100)")
        ->check(CLI::PositiveNumber);
    command
        ->add_option("--identities", options->identities,
                     "client identities the sessions belong to, so workers serving them "
                     "(load process p: identity p mod K; default 1)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
    command->add_option("--duration", options->duration, "each measured phase, seconds (default 3)")
        ->check(CLI::PositiveNumber);
    command->add_option("--responder-spin", options->responder_spin,
                        "rpmemd's responder-spin (e.g. 0, 20us; default: rpmemd's)");
    command->add_option("--nthreads", options->nthreads,
                        "rpmemd's nthreads (default: rpmemd's, one per CPU)");
    command->add_option("--provider", options->provider, "tcp (default) or sockets");
    command->add_option("--pool-dir", options->pool_dir,
                        "where the pool files go (default /dev/shm)");
    command->add_option("--rpmemd", options->rpmemd,
                        "the daemon (default: this build tree's, else rpmemd from PATH)");
    add_output_options(*command, options->output);
}

} // namespace rpmem::bench
