// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/worker/worker_main.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/failpoint.h"
#include "base/library_logger.h"
#include "base/log_text.h"
#include "fabric/provider.h"
#include "protocol/worker_message.h"
#include "rpmemd/boundary/packet_socket.h"
#include "rpmemd/boundary/worker_contract.h"
#include "rpmemd/worker/fabric_target.h"
#include "rpmemd/worker/responder_pool.h"
#include "rpmemd/worker/sandbox.h"
#include "rpmemd/worker/segment_pool.h"

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "unknown"
#endif

namespace rpmem::daemon {

namespace {

// This worker's version as it tells the supervisor.
std::string worker_version() {
#ifdef RPMEM_FAILPOINTS
    // Test builds only (meson -Dfailpoints=true): RPMEM_FAILPOINT=worker-version-mismatch makes
    // the worker claim another version, as a worker from another build would.
    if (failpoint_is("worker-version-mismatch"))
        return RPMEM_VERSION "-other";
#endif
    return RPMEM_VERSION;
}

// The supervisor's first request is its WorkerHello; this worker answers with its own and
// goes on only when the two versions agree. False (logged) otherwise.
bool answer_greeting(const PacketSocket& socket) {
    auto packet = socket.receive(std::nullopt);
    if (!packet) {
        spdlog::error("worker socket, waiting for the supervisor's greeting: {}",
                      packet.error().message());
        return false;
    }
    auto message = protocol::decode_worker_message(packet->bytes);
    const auto* hello = message ? std::get_if<protocol::WorkerHello>(&*message) : nullptr;
    if (hello == nullptr) {
        spdlog::error("worker socket: {}",
                      message ? "the first request is not a greeting" : message.error().message());
        return false;
    }
    const std::string mine = worker_version();
    auto encoded = protocol::encode_worker_message(protocol::WorkerHello{mine});
    if (!encoded || !socket.send(*encoded)) {
        spdlog::error("worker socket: could not answer the supervisor's greeting");
        return false;
    }
    if (hello->version != mine) {
        spdlog::error("the supervisor is rpmemd '{}', this worker rpmemd '{}': exiting",
                      escape_for_log(hello->version), mine);
        return false;
    }
    return true;
}

struct WorkerArguments {
    spdlog::level::level_enum level = spdlog::level::warn;
    SandboxOptions sandbox;
    bool use_sandbox = true;
    unsigned responders = 0; // 0: one per online CPU
};

Result<WorkerArguments> parse_arguments(int argc, char** argv) {
    WorkerArguments parsed;
    for (int i = 2; i < argc; ++i) {
        std::string_view arg = argv[i];
        auto value = [&]() -> Result<std::string_view> {
            if (i + 1 >= argc)
                return fail(EINVAL, fmt::format("worker option {} needs a value", arg));
            return std::string_view(argv[++i]);
        };
        auto number = [&]() -> Result<unsigned long> {
            auto text = value();
            if (!text)
                return fail(std::move(text.error()));
            const std::string digits(*text);
            char* end = nullptr;
            unsigned long n = std::strtoul(digits.c_str(), &end, 10);
            if (end == nullptr || *end != '\0')
                return fail(EINVAL, fmt::format("worker option {}: not a number", arg));
            return n;
        };
        if (arg == "--log-level") {
            auto level = value();
            if (!level)
                return fail(std::move(level.error()));
            parsed.level = spdlog::level::from_str(std::string(*level));
        } else if (arg == "--uid") {
            auto uid = number();
            if (!uid)
                return fail(std::move(uid.error()));
            parsed.sandbox.uid = static_cast<uid_t>(*uid);
        } else if (arg == "--gid") {
            auto gid = number();
            if (!gid)
                return fail(std::move(gid.error()));
            parsed.sandbox.gid = static_cast<gid_t>(*gid);
        } else if (arg == "--responders") {
            auto threads = number();
            if (!threads)
                return fail(std::move(threads.error()));
            parsed.responders = static_cast<unsigned>(std::min<unsigned long>(*threads, 256));
        } else if (arg == "--no-sandbox") {
            parsed.use_sandbox = false;
        } else if (arg == "--map-part-starts") {
            parsed.sandbox.map_part_starts = true;
        } else {
            return fail(EINVAL, fmt::format("unknown worker option '{}'", arg));
        }
    }
    return parsed;
}

// Log lines go to stderr as "LEVEL|text"; the supervisor reads them, escapes them and logs
// them under this worker's name at that level (so this process needs no log file).
void start_worker_logging(spdlog::level::level_enum level) {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_pattern("%L|%v");
    auto logger = std::make_shared<spdlog::logger>("rpmemd-worker", sink);
    logger->set_level(level);
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
    configure_library_loggers({sink}, level);
}

// The sessions this worker serves: WorkerStart makes one, WorkerStop ends it. Their data
// planes share this worker's responder threads (made with the first session, which also
// brings the spin and CPU every session of the worker carries).
class WorkerSessions {
public:
    WorkerSessions(const PacketSocket& socket, unsigned responders)
        : socket_(socket)
        , responder_threads_(responders != 0 ? responders
                                             : static_cast<unsigned>(
                                                   std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)))) {
    }

    ~WorkerSessions() {
        for (auto& [id, plane] : planes_)
            plane->stop();
    }

    // Serves until the supervisor closes the socket (0) or the socket fails (EPROTO etc.).
    int serve() {
        for (;;) {
            auto packet = socket_.receive(std::nullopt);
            if (!packet) {
                if (packet.error().errno_value() == ECONNRESET) {
                    spdlog::debug("the supervisor closed the worker socket: exiting");
                    return 0;
                }
                spdlog::error("worker socket: {}", packet.error().message());
                return 1;
            }
            auto message = protocol::decode_worker_message(packet->bytes);
            if (!message) {
                spdlog::error("worker socket: {}", message.error().message());
                return 1;
            }
            protocol::WorkerMessage reply;
            if (auto* start = std::get_if<protocol::WorkerStart>(&*message)) {
                reply = this->start(*start, std::move(packet->fds));
            } else if (auto* stop = std::get_if<protocol::WorkerStop>(&*message)) {
                reply = this->stop(stop->session_id);
            } else {
                spdlog::error("worker socket: a reply where a request belongs");
                return 1;
            }
            auto encoded = protocol::encode_worker_message(reply);
            if (!encoded) {
                spdlog::error("{}", encoded.error().message());
                return 1;
            }
            if (auto sent = socket_.send(*encoded); !sent) {
                spdlog::error("{}", sent.error().message());
                return 1;
            }
        }
    }

private:
    protocol::WorkerStarted start(const protocol::WorkerStart& start, std::vector<UniqueFd> fds) {
        protocol::WorkerStarted reply;
        reply.session_id = start.session_id;
        auto refuse = [&](const Error& error) {
            reply.errno_value = static_cast<std::uint32_t>(error.errno_value());
            reply.message = error.message().substr(0, 1024);
            return reply;
        };
        if (planes_.contains(start.session_id))
            return refuse(Error(EEXIST, "the session already has a data plane"));
        std::shared_ptr<SharedCounterPage> counters;
        if (start.counters_page) {
            // The last descriptor, after the pool's parts.
            if (fds.empty())
                return refuse(Error(EPROTO, "the counters page descriptor is missing"));
            auto attached = SharedCounterPage::attach(std::move(fds.back()));
            fds.pop_back();
            if (!attached)
                return refuse(attached.error());
            counters = std::move(*attached);
        }
        auto pool = SegmentPool::map(start, std::move(fds));
        if (!pool)
            return refuse(pool.error());

        DataPlaneRequest request;
        request.provider = start.provider;
        request.allowed_providers = start.allowed_providers;
        request.bind_host = start.bind_host;
        request.protected_prefix = start.data_offset;
        request.lanes = start.lanes;
        request.token = start.token;
        request.session_name = start.session_name;
        request.responder_spin = std::chrono::nanoseconds(
            std::min<std::uint64_t>(start.responder_spin_ns, 1'000'000'000));
        request.responder_cpu = start.responder_cpu;
        request.reply_delay = std::chrono::nanoseconds(start.reply_delay_ns);
        request.counters = std::move(counters);
        if (!responders_)
            responders_ = std::make_unique<ResponderPool>(ResponderOptions{
                .threads = responder_threads_,
                .spin = request.responder_spin,
                .cpu = request.responder_cpu,
            });
        auto plane = start_fabric_target(request, std::move(*pool), responders_.get());
        if (!plane)
            return refuse(plane.error());
        const DataPlaneInfo& info = (*plane)->info();
        reply.data_path = info.path;
        reply.software_provider = info.traits.software;
        reply.offers_rma_pmem = info.traits.offers_rma_pmem;
        planes_.emplace(start.session_id, std::move(*plane));
        return reply;
    }

    protocol::WorkerStopped stop(std::uint64_t session_id) {
        if (auto found = planes_.find(session_id); found != planes_.end()) {
            found->second->stop();
            planes_.erase(found); // unmaps the pool: nothing of it is left in this process
        }
        return {session_id};
    }

    const PacketSocket& socket_;
    unsigned responder_threads_;
    std::unique_ptr<ResponderPool> responders_; // outlives the planes, which detach from it
    std::map<std::uint64_t, std::unique_ptr<DataPlane>> planes_;
};

} // namespace

int run_worker(int argc, char** argv) {
    // A supervisor that dies takes its workers along, even one that is not reading its socket.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::signal(SIGPIPE, SIG_IGN);
    // Ctrl-C of a foreground rpmemd, or systemd's SIGTERM to the whole unit: the supervisor
    // ends its sessions in order and then us, by closing the socket.
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
    std::signal(SIGHUP, SIG_IGN);

    auto arguments = parse_arguments(argc, argv);
    start_worker_logging(arguments ? arguments->level : spdlog::level::warn);
    if (!arguments) {
        spdlog::error("{}", arguments.error().message());
        return 2;
    }
    PacketSocket socket{UniqueFd(kWorkerSocketFd)};

    // Load libfabric's providers while files may still be opened; later fi_getinfo calls
    // reuse them. The load leaves the dispositions above as they are (fabric::FabricLibrary),
    // so a worker that crashes dies by its signal, for the supervisor's log and a core dump.
    (void)fabric::select_provider({"", fabric::Role::listener, "127.0.0.1", "0"});

    if (arguments->use_sandbox) {
        SandboxOptions& options = arguments->sandbox;
        options.keep_fds = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, kWorkerSocketFd};
        // glibc and libfabric read interface and CPU facts under these while serving.
        options.read_only_paths = {"/proc", "/sys"};
        auto entered = enter_sandbox(options);
        if (!entered) {
            spdlog::error("entering the sandbox: {}", entered.error().message());
            return 3;
        }
        if (entered->landlock_abi == 0)
            spdlog::info("sandbox without Landlock: {}", entered->landlock_note);
        spdlog::debug("sandboxed: landlock ABI {}, seccomp {}, ids dropped {}, headers {}",
                      entered->landlock_abi, entered->seccomp, entered->dropped_privileges,
                      options.map_part_starts ? "mappable (sets with headerless parts)"
                                              : "out of reach");
    }
    if (!answer_greeting(socket))
        return 4;
    WorkerSessions sessions(socket, arguments->responders);
    return sessions.serve();
}

} // namespace rpmem::daemon
