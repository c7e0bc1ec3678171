// SPDX-License-Identifier: BSD-3-Clause
// Containment of one client's data path (DESIGN.md, security model and invariant 6): an
// authenticated client that abuses its own session's RMA access can neither bring rpmemd down
// nor touch another client's pool, nor rewrite a pool header. The acceptance check of the
// per-identity worker processes and of registering only the pool's data.
//
// The hole these tests aim at: libfabric's memory-region check (ofi_mr_map_verify in
// prov/util/src/util_mr_map.c, 1.17, used by the tcp and sockets providers) accepts a remote
// range [addr, addr + len) of region R when
//
//     addr >= R.base   &&   addr + len <= R.base + R.length
//
// with `addr + len` computed modulo 2^64 (pointer arithmetic, no overflow check). tcp's
// fi_writemsg sends the claimed rma_iov length unchanged while the header's size counts only
// the bytes carried (rma_attacker.h), and the target then receives those bytes at `addr`.
//
// Every test runs the real rpmemd; the attacker ("alice", the host's own client certificate)
// and the victim ("bob", a second certificate of the test CA) are distinct identities with
// distinct pools, over tcp and over sockets. The victim uses the real client
// (rpmem::client::Replica), writes a pattern, persists it and keeps its session open throughout.
// Run alone with `meson test -C build rpmemd_containment` or the executable with "[containment]".
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <openssl/pem.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/target.h"
#include "channel/credentials.h"
#include "client/replica.h"
#include "client_settings.h"
#include "rma_attacker.h"
#include "target_host.h"

using namespace rpmem;
using namespace rpmem::test;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kPoolSize = 2u << 20; // one 2 MiB part per pool
constexpr std::size_t kHeaderSize = 4096;   // the pool header at pool offset 0 of part 0
constexpr std::size_t kPatternOffset = kHeaderSize;
constexpr std::size_t kPatternSize = 64 * 1024;
constexpr std::uint64_t kTwoTo63 = 1ULL << 63;

const std::array<std::byte, 8> kPayload{std::byte{'A'}, std::byte{'T'}, std::byte{'T'},
                                        std::byte{'A'}, std::byte{'C'}, std::byte{'K'},
                                        std::byte{'E'}, std::byte{'D'}};

std::vector<std::byte> read_file(const std::filesystem::path& file, std::size_t offset,
                                 std::size_t length) {
    std::ifstream in(file, std::ios::binary);
    REQUIRE(in);
    in.seekg(static_cast<std::streamoff>(offset));
    std::vector<std::byte> bytes(length);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(length));
    REQUIRE(static_cast<std::size_t>(in.gcount()) == length);
    return bytes;
}

std::vector<std::byte> pattern(std::size_t size, unsigned seed) {
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<std::byte>((i * 131 + seed * 7 + 1) & 0xff);
    return bytes;
}

// "" when `got` equals `want`, else where and how they first differ (Catch2 would print every
// byte of two 64 KiB vectors).
std::string difference(const std::vector<std::byte>& got, const std::vector<std::byte>& want) {
    if (got == want)
        return {};
    if (got.size() != want.size())
        return fmt::format("{} bytes instead of {}", got.size(), want.size());
    std::size_t first = 0;
    while (got[first] == want[first])
        ++first;
    std::size_t last = got.size() - 1;
    while (got[last] == want[last])
        --last;
    std::string text = fmt::format("bytes {}..{} differ; from {}:", first, last, first);
    for (std::size_t i = first; i <= last && i < first + 16; ++i)
        text += fmt::format(" {:02x}/{:02x}", static_cast<unsigned>(got[i]),
                            static_cast<unsigned>(want[i]));
    return text + " (got/expected)";
}

// rpmemd and every process below it (per-identity workers, once there are some).
std::set<pid_t> process_tree(pid_t root) {
    std::set<pid_t> tree{root};
    for (bool grew = true; grew;) {
        grew = false;
        std::error_code ignored;
        for (const auto& entry : std::filesystem::directory_iterator("/proc", ignored)) {
            const std::string name = entry.path().filename();
            if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
                continue;
            std::ifstream stat(entry.path() / "stat");
            std::string line;
            if (!std::getline(stat, line))
                continue;
            // "pid (comm) state ppid ...": comm may hold spaces, so parse after the last ')'.
            const auto close = line.rfind(')');
            if (close == std::string::npos)
                continue;
            std::istringstream rest(line.substr(close + 1));
            char state = 0;
            pid_t parent = 0;
            rest >> state >> parent;
            const pid_t pid = static_cast<pid_t>(std::stol(name));
            if (tree.count(parent) != 0 && tree.insert(pid).second)
                grew = true;
        }
    }
    return tree;
}

// Where the target maps byte 0 of `part` as part of a pool (the largest mapping of the file
// at file offset 0; the separate 4 KiB header mapping is smaller), in any process of rpmemd's
// tree whose maps we may read.
std::optional<std::uint64_t> mapped_address(pid_t daemon, const std::filesystem::path& part) {
    const std::string wanted = std::filesystem::weakly_canonical(part).string();
    std::optional<std::uint64_t> best;
    std::uint64_t best_length = 0;
    for (pid_t pid : process_tree(daemon)) {
        std::ifstream maps(fmt::format("/proc/{}/maps", pid));
        std::string line;
        while (std::getline(maps, line)) {
            const auto slash = line.find('/');
            if (slash == std::string::npos || line.substr(slash) != wanted)
                continue;
            std::uint64_t start = 0, end = 0, offset = 0;
            if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx", &start, &end, &offset) != 3 ||
                offset != 0)
                continue;
            if (end - start > best_length) {
                best = start;
                best_length = end - start;
            }
        }
    }
    return best;
}

// How rpmemd ended, if it ends within `grace` (nullopt: still running then), without reaping
// it. A crash closes its sockets a moment before the process becomes waitable, so a peer that
// saw its connection drop must give the exit that moment.
std::optional<std::string> daemon_exit_within(pid_t pid, std::chrono::milliseconds grace) {
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd >= 0) {
        pollfd watch{pidfd, POLLIN, 0};
        (void)::poll(&watch, 1, static_cast<int>(grace.count()));
        ::close(pidfd);
    }
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return fmt::format("waitid: {}", std::strerror(errno));
    if (info.si_pid == 0)
        return std::nullopt;
    if (info.si_code == CLD_EXITED)
        return fmt::format("exited with status {}", info.si_status);
    return fmt::format("killed by signal {}", info.si_status);
}

// The second client: its own identity, pool and session, through the real client library.
class Victim {
public:
    Victim(TargetHost& host, const channel::TlsFiles& tls, const std::string& provider)
        : host_(host)
        , memory_(pool_buffer(kPoolSize)) {
        host.write_set("victim.set", "victim", 1);
        client::Settings settings = client_settings(tls, provider);
        settings.enable_sockets = true;
        unsigned lanes = 1;
        PoolAttributes attributes = pmemobj_attributes();
        auto replica =
            client::Replica::create(settings, Target{"", "127.0.0.1", host.port()}, "victim.set",
                                    {memory_.data(), kPoolSize}, lanes, &attributes);
        INFO((replica ? std::string() : replica.error().message()));
        REQUIRE(replica);
        replica_ = std::move(*replica);

        expected_ = pattern(kPatternSize, 1);
        std::copy(expected_.begin(), expected_.end(), memory_.data() + kPatternOffset);
        auto persisted =
            replica_->persist(kPatternOffset, kPatternSize, 0, client::PersistMode::strict);
        INFO((persisted ? std::string() : persisted.error().message()));
        REQUIRE(persisted);
        REQUIRE(file_bytes() == expected_);
        header_ = read_file(part(), 0, kHeaderSize);
    }

    std::filesystem::path part() const { return host_.dir().path() / "victim.0"; }
    std::vector<std::byte> file_bytes() const {
        return read_file(part(), kPatternOffset, kPatternSize);
    }
    const std::vector<std::byte>& header() const noexcept { return header_; }

    // The victim's own view after an attack: the target's file holds exactly its pattern, its
    // session still reads the pattern back and still persists.
    void check_unharmed() {
        CHECK(difference(file_bytes(), expected_) == "");
        CHECK(difference(read_file(part(), 0, kHeaderSize), header_) == "");

        std::vector<std::byte> back(kPatternSize);
        auto read = replica_->read(back, kPatternOffset, 0);
        INFO("victim's read: " << (read ? std::string("ok") : read.error().message()));
        CHECK(read);
        if (read)
            CHECK(difference(back, expected_) == "");

        const std::vector<std::byte> more = pattern(4096, 2);
        const std::size_t offset = kPatternOffset + kPatternSize;
        std::copy(more.begin(), more.end(), memory_.data() + offset);
        auto persisted = replica_->persist(offset, more.size(), 0, client::PersistMode::strict);
        INFO("victim's persist: " << (persisted ? std::string("ok") : persisted.error().message()));
        CHECK(persisted);
        if (persisted)
            CHECK(difference(read_file(part(), offset, more.size()), more) == "");
    }

private:
    TargetHost& host_;
    PageBuffer memory_;
    std::unique_ptr<client::Replica> replica_;
    std::vector<std::byte> expected_;
    std::vector<std::byte> header_;
};

std::unique_ptr<RmaAttacker> make_attacker(TargetHost& host, const std::string& provider) {
    host.write_set("attacker.set", "attacker", 1);
    RmaAttacker::Options options;
    options.port = host.port();
    options.tls = host.credentials().client(); // "alice"
    options.pool_set = "attacker.set";
    options.pool_size = kPoolSize;
    options.attributes = pmemobj_attributes();
    auto preference = protocol::provider_preference_from_name(provider);
    REQUIRE(preference);
    options.provider = *preference;
    // Bounds each of its steps; a sockets target stalls on the wrap write (waiting for the
    // bytes the claimed length promised), so this is also how long that write takes to fail.
    options.patience = 10s;
    auto attacker = RmaAttacker::create(options);
    INFO((attacker ? std::string() : attacker.error().message()));
    REQUIRE(attacker);
    const protocol::DataPath& path = (*attacker)->data_path();
    WARN(fmt::format("attacker's data path: provider {}, remote_base {:#x}, key {:#x}, "
                     "offset_addressing {}, pool_size {}",
                     path.provider, path.remote_base, path.remote_key, path.offset_addressing,
                     path.pool_size));
    return std::move(*attacker);
}

using Spans = std::vector<RmaAttacker::RemoteSpan>;

void record(const char* what, const Spans& spans, const RmaAttacker::WriteResult& result) {
    std::string claimed;
    for (const auto& span : spans)
        claimed +=
            fmt::format("{}({:#x}, {:#x})", claimed.empty() ? "" : " ", span.address, span.length);
    WARN(fmt::format("{}: rma_iov {} carrying 8 bytes: {}{}{}", what, claimed,
                     name_of(result.outcome), result.detail.empty() ? "" : ": ", result.detail));
}

// The remote I/O vector that makes the target store the 8 bytes at `address` while each entry
// passes the check against the attacker's region: `address` and `landing` (a spot inside that
// region) in the target's addressing. tcp takes one entry, (address, landing - address): its
// end wraps around 2^64 to `landing`. sockets wants the claimed lengths to add up to the 8
// bytes carried, modulo 2^64: a first entry (address, 2^64 - address) whose end wraps to 0
// (in virtual addresses; which passes `<= end` whatever the region), and a second one of
// length address + 8 that starts 2^64 - (address + 8 - landing) (a huge address, so `>= base`)
// and whose end wraps to `landing`. The sockets target fills the first entry with all 8 bytes.
// `base` is what the provider adds to an address (the region's virtual address under offset
// addressing, 0 otherwise): the checks compare virtual addresses.
Spans wrapping_spans(const std::string& provider, std::uint64_t address, std::uint64_t landing,
                     std::uint64_t base) {
    if (provider != "sockets")
        return {{address, landing - address}};
    const std::uint64_t va = address + base;
    const std::uint64_t landing_va = landing + base;
    const std::uint64_t first_length = 0 - va;
    const std::uint64_t second_length = va + kPayload.size();
    const std::uint64_t second_va = landing_va - second_length;
    return {{address, first_length}, {second_va - base, second_length}};
}

// rpmemd still runs and serves a client that arrives now, at once: a new session creates a
// pool and closes it.
void check_daemon_serving(TargetHost& host) {
    const auto exit = daemon_exit_within(host.daemon().pid(), 2s);
    INFO("rpmemd " << exit.value_or("still running"));
    CHECK_FALSE(exit);

    channel::ClientConfig config;
    config.host = "127.0.0.1";
    config.port = host.port();
    config.tls = host.client_tls("carol");
    config.connect_timeout = 10s;
    config.handshake_timeout = 10s;
    config.request_timeout = 10s;
    auto client = channel::Client::connect(std::move(config));
    INFO("new client: " << (client ? std::string("connected") : client.error().message()));
    CHECK(client);
    if (!client)
        return;
    host.write_set("fresh.set", "fresh", 1);
    protocol::CreateRequest create;
    create.pool_set = "fresh.set";
    create.pool_size = kPoolSize;
    create.lanes = 1;
    create.attributes = pmemobj_attributes();
    auto created = channel::expect<protocol::CreateReply>((*client)->call(create), "create");
    INFO("new client's create: " << (created ? std::string("ok") : created.error().message()));
    CHECK(created);
    auto closed =
        channel::expect<protocol::CloseReply>((*client)->call(protocol::CloseRequest{}), "close");
    CHECK(closed);
}

} // namespace

TEST_CASE("a write claiming (2^63, 2^63) brings down neither rpmemd nor another client",
          "[containment][crash]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    INFO("provider " << provider);
    TargetHost host;
    Victim victim(host, host.client_tls("bob"), provider);
    auto attacker = make_attacker(host, provider);

    // addr = 2^63 passes `addr >= base` (user space ends below 2^47); addr + len = 2^64
    // wraps to 0 (to the region's base under offset addressing, where the provider adds it
    // to both), which passes `<= base + length`. The 8 bytes are then stored at 2^63 (plus
    // that base), a non-canonical address: SIGSEGV. sockets also needs the claimed lengths
    // to add up to 8 modulo 2^64: a second entry (2^63, 2^63 + 8) passes the same way.
    Spans spans{{kTwoTo63, kTwoTo63}};
    if (provider == "sockets")
        spans.push_back({kTwoTo63, kTwoTo63 + kPayload.size()});
    const auto result = attacker->write(spans, kPayload);
    record("crash write", spans, result);
    // Whatever the attacker saw, it must not have been told its write landed.
    CHECK(result.outcome != RmaAttacker::Outcome::acknowledged);

    check_daemon_serving(host);
    victim.check_unharmed();
}

TEST_CASE("a write whose range wraps around 2^64 does not reach another client's pool",
          "[containment][wrap]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    INFO("provider " << provider);
    TargetHost host;
    // The victim maps its pool first: mmap places later mappings lower, so the attacker's
    // region lies below the victim's, as `addr >= base` needs (reported by WARN below).
    Victim victim(host, host.client_tls("bob"), provider);
    auto attacker = make_attacker(host, provider);
    const protocol::DataPath& path = attacker->data_path();
    const pid_t daemon = host.daemon().pid();

    const auto attacker_va = mapped_address(daemon, host.dir().path() / "attacker.0");
    auto victim_va = mapped_address(daemon, victim.part());
    WARN(fmt::format("in rpmemd's tree: attacker's pool at {}, victim's pool at {}",
                     attacker_va ? fmt::format("{:#x}", *attacker_va) : "(not found)",
                     victim_va ? fmt::format("{:#x}", *victim_va) : "(not found)"));
    if (!victim_va) {
        // Not readable (a sandboxed worker) or not mapped where we look: any address is an
        // equally good attempt then; take one above the attacker's region.
        victim_va =
            (path.offset_addressing ? attacker_va.value_or(0) : path.remote_base) + (1ULL << 32);
    }

    // The victim's first pattern word, in the target's address space...
    const std::uint64_t victim_target = *victim_va + kPatternOffset;
    // ...named in the attacker's addressing: virtual addresses under FI_MR_VIRT_ADDR, else an
    // offset the provider adds the region's base to (modulo 2^64 as well).
    const std::uint64_t base = path.offset_addressing ? attacker_va.value_or(0) : 0;
    const std::uint64_t address = victim_target - base;
    // The claimed length makes addr + len wrap around 2^64 into the attacker's own registered
    // range (to its middle: pool data under any layout of the fix), so that
    //   addr >= attacker base        holds whenever the victim's pool lies above the attacker's,
    //   addr + len <= attacker end   holds because the sum wraps;
    // the provider then stores the 8 bytes at `addr`, inside the victim's pool (see
    // wrapping_spans() for the exact entries per provider).
    const std::uint64_t landing = path.remote_base + path.pool_size / 2;
    const bool below = attacker_va && *victim_va <= *attacker_va;
    if (below)
        WARN("the victim's pool lies below the attacker's: the check refuses this wrap");

    const Spans spans = wrapping_spans(provider, address, landing, base);
    const auto result = attacker->write(spans, kPayload);
    record("wrap write", spans, result);
    // Below, `addr >= attacker base` fails: the provider's check refuses the write, as in the
    // refused-write case. Above, whatever the provider did, the victim's pool must be unharmed.
    if (below)
        CHECK(result.outcome != RmaAttacker::Outcome::acknowledged);

    victim.check_unharmed();
    check_daemon_serving(host);
}

TEST_CASE("a plain RMA write at pool offset 0 leaves the pool header unchanged",
          "[containment][header]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    INFO("provider " << provider);
    TargetHost host;
    Victim victim(host, host.client_tls("bob"), provider);
    auto attacker = make_attacker(host, provider);
    const auto part = host.dir().path() / "attacker.0";
    const auto header = read_file(part, 0, kHeaderSize);

    // An honest write (the claimed length is the 8 bytes carried) at remote_base + 0: pool
    // offset 0 is the header's signature, which must not be registered for remote access.
    const Spans spans{{attacker->data_path().remote_base, kPayload.size()}};
    const auto result = attacker->write(spans, kPayload);
    record("header write", spans, result);

    // Only the file counts: where the fix makes remote_base name the data, this write is a
    // legitimate one and may well be acknowledged.
    CHECK(difference(read_file(part, 0, kHeaderSize), header) == "");
    victim.check_unharmed();
    check_daemon_serving(host);
}

TEST_CASE("a write the provider's check refuses costs the attacker its lane, nobody else",
          "[containment][refused]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp", "sockets");
    INFO("provider " << provider);
    TargetHost host;
    Victim victim(host, host.client_tls("bob"), provider);
    auto attacker = make_attacker(host, provider);

    // One page below the region, honestly 8 bytes long: `addr >= base` fails, whatever the
    // addressing (under offset addressing 2^64 - 4096 plus the base wraps to base - 4096).
    const Spans spans{{attacker->data_path().remote_base - 4096, kPayload.size()}};
    const auto result = attacker->write(spans, kPayload);
    record("refused write", spans, result);
    CHECK(result.outcome != RmaAttacker::Outcome::acknowledged);
    CHECK(result.outcome != RmaAttacker::Outcome::timed_out);

    victim.check_unharmed();
    check_daemon_serving(host);
}
